/** A request log entry as the edge records it: a key's GET /v1/account, the n-th of a run (by default n ms after `T0`). */
import type { RequestLogEntry } from '../../src/store/requestLogs.ts';

export const T0 = Date.parse('2026-11-26T12:00:00.000Z');

export const logEntry = (n: number, arrivedAt = T0 + n): RequestLogEntry => ({
  accountId: 'acct-01m8aaaaaaaaaaaaaaaaaaaaaa',
  requestId: `req-${n}`,
  clientRequestId: null,
  keyId: 'key-01m8aaaaaaaaaaaaaaaaaaaaaa',
  method: 'GET',
  operationId: 'getAccount',
  path: '/v1/account',
  pathLength: 11,
  status: 200,
  latencyMs: 1,
  clientAddress: '127.0.0.1',
  idempotencyKey: null,
  idempotentReplayed: false,
  problem: null,
  arrivedAt,
});
