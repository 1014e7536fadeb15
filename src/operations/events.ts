/**
 * /v1/events: the account's events feed. Any key of the account may read it (no x-required-role):
 * it holds what the account's webhooks carry, which member keys may already read through the
 * delivery log and the resources themselves.
 */
import type { OperationHandlers } from '../contract/handlers.ts';
import { decodeCursor, listBody } from '../http/pagination.ts';
import { getEvent, listEvents } from '../services/events.ts';

export const eventOperations = {
  listEvents: async ({ query }, ctx) => {
    const page = await listEvents(
      ctx,
      ctx.principal.accountId,
      { event: query.event, createdFrom: query.createdFrom, createdTo: query.createdTo },
      { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, 'evt') },
    );
    return { status: 200, body: listBody(page) };
  },

  getEvent: async ({ path }, ctx) => ({ status: 200, body: await getEvent(ctx, ctx.principal.accountId, path.eventId) }),
} satisfies OperationHandlers;
