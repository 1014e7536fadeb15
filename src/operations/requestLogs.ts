/**
 * /v1/request-logs: the account's request log (admin). A test key reads the test environment's
 * requests, a live key the live ones: the principal's accountId is the environment.
 */
import type { OperationHandlers } from '../contract/handlers.ts';
import { decodeCursor, listBody } from '../http/pagination.ts';
import { getRequestLog, isRequestLogEntryId, listRequestLogs } from '../services/requestLogs.ts';

export const requestLogOperations = {
  listRequestLogs: async ({ query }, ctx) => {
    const page = await listRequestLogs(
      ctx,
      ctx.principal.accountId,
      {
        status: query.status,
        statusClass: query.statusClass,
        keyId: query.keyId,
        operationId: query.operationId,
        clientRequestId: query.clientRequestId,
        createdFrom: query.createdFrom,
        createdTo: query.createdTo,
      },
      { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, isRequestLogEntryId) },
    );
    return { status: 200, body: listBody(page) };
  },

  getRequestLog: async ({ path }, ctx) => ({ status: 200, body: await getRequestLog(ctx, ctx.principal.accountId, path.requestId) }),
} satisfies OperationHandlers;
