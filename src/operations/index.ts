/**
 * Every operation handler, keyed by the spec's operationId. The contract refuses to start when an
 * operation of the spec has no handler here, or a handler names no operation of the spec.
 */
import { accountOperations } from './account.ts';
import { apiKeyOperations } from './apiKeys.ts';
import type { OperationHandlers } from './types.ts';

export const operationHandlers: OperationHandlers = {
  ...accountOperations,
  ...apiKeyOperations,
  // quotes and pricing

  // webhooks

  // applications, documents and underwriting

  // export

  // bank verification

};
