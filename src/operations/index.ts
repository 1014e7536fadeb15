/**
 * Every operation handler, keyed by the spec's operationId. The contract refuses to start when an
 * operation of the spec has no handler here, or a handler names no operation of the spec.
 */
import { accountOperations } from './account.ts';
import { apiKeyOperations } from './apiKeys.ts';
import { auditOperations } from './audit.ts';
import { applicationOperations } from './applications.ts';
import { bankOperations } from './banks.ts';
import { documentOperations } from './documents.ts';
import { noticeOperations } from './notices.ts';
import { eventOperations } from './events.ts';
import { exportOperations } from './exports.ts';
import { loanEstimateOperations } from './loanEstimates.ts';
import { pricingOperations } from './pricing.ts';
import { quoteOperations } from './quotes.ts';
import { requestLogOperations } from './requestLogs.ts';
import { rateLockOperations } from './rateLocks.ts';
import { testModeOperations } from './testMode.ts';
import { underwritingOperations } from './underwriting.ts';
import { webhookOperations } from './webhooks.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

export const operationHandlers: OperationHandlers = {
  ...accountOperations,
  ...apiKeyOperations,
  // quotes and pricing
  ...quoteOperations,
  ...pricingOperations,
  ...rateLockOperations,

  // webhooks and the events feed
  ...webhookOperations,
  ...eventOperations,

  // the request log
  ...requestLogOperations,

  // applications, documents and underwriting
  ...applicationOperations,
  ...documentOperations,
  ...noticeOperations,
  ...underwritingOperations,
  ...loanEstimateOperations,

  // export
  ...exportOperations,

  // the audit log
  ...auditOperations,

  // bank verification
  ...bankOperations,

  // test mode
  ...testModeOperations,

};
