/** /v1/applications: create, read, list, edit, submit for a decision, review, withdraw. */
import { decodeCursor, listBody } from '../http/pagination.ts';
import { reviewApplication, submitApplication, withdrawApplication } from '../services/applicationMoves.ts';
import { createApplication, getApplication, listApplications, toApplication, updateApplication } from '../services/applications.ts';
import { addCondition, resolveConditionAsUnderwriter } from '../services/conditions.ts';
import { getApplicationDemographics } from '../services/applicationData.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

export const applicationOperations = {
  createApplication: async ({ body }, ctx) => {
    const record = await createApplication(ctx, ctx.principal.accountId, body);
    ctx.log.info({ mortgageId: record.mortgageId }, 'application created');
    return { status: 201, body: toApplication(record) };
  },

  listApplications: async ({ query }, ctx) => {
    const page = await listApplications(
      ctx,
      ctx.principal.accountId,
      { status: query.status },
      { limit: query.limit ?? 20, afterId: decodeCursor(query.cursor, 'mtg') },
      ctx.apiVersion,
    );
    return { status: 200, body: listBody({ ...page, items: page.items.map(toApplication) }) };
  },

  getApplication: async ({ path }, ctx) => {
    const record = await getApplication(ctx, ctx.principal.accountId, path.mortgageId);
    return { status: 200, body: toApplication(record) };
  },

  // Never logged: the answer is the applicant's demographic information.
  getApplicationDemographics: async ({ path }, ctx) => {
    return { status: 200, body: await getApplicationDemographics(ctx, ctx.principal.accountId, path.mortgageId) };
  },

  updateApplication: async ({ path, body }, ctx) => {
    const record = await updateApplication(ctx, ctx.principal.accountId, path.mortgageId, body);
    return { status: 200, body: toApplication(record) };
  },

  submitApplication: async ({ path }, ctx) => {
    const record = await submitApplication(ctx, ctx.principal.accountId, path.mortgageId);
    ctx.log.info({ mortgageId: record.mortgageId, outcome: record.decision?.outcome }, 'application decided');
    return { status: 200, body: toApplication(record) };
  },

  approveApplication: async ({ path, body }, ctx) => {
    const record = await reviewApplication(ctx, ctx.principal.accountId, path.mortgageId, {
      action: 'approve',
      reviewer: { kind: 'key', id: ctx.principal.keyId },
      note: body?.note,
      conditions: body?.conditions,
    });
    ctx.log.info({ mortgageId: record.mortgageId, keyId: ctx.principal.keyId }, 'referred application approved');
    return { status: 200, body: toApplication(record) };
  },

  declineApplication: async ({ path, body }, ctx) => {
    const record = await reviewApplication(ctx, ctx.principal.accountId, path.mortgageId, {
      action: 'decline',
      reviewer: { kind: 'key', id: ctx.principal.keyId },
      note: body?.note,
      noticeReasons: body?.reasons,
    });
    ctx.log.info({ mortgageId: record.mortgageId, keyId: ctx.principal.keyId }, 'referred application declined');
    return { status: 200, body: toApplication(record) };
  },

  addCondition: async ({ path, body }, ctx) => {
    const record = await addCondition(ctx, ctx.principal.accountId, path.mortgageId, body);
    ctx.log.info({ mortgageId: record.mortgageId, keyId: ctx.principal.keyId }, 'condition added');
    return { status: 201, body: toApplication(record) };
  },

  satisfyCondition: async ({ path, body }, ctx) => {
    const record = await resolveConditionAsUnderwriter(ctx, ctx.principal.accountId, path.mortgageId, path.conditionId, {
      status: 'satisfied',
      note: body.note,
      actor: { kind: 'key', id: ctx.principal.keyId },
    });
    ctx.log.info({ mortgageId: record.mortgageId, conditionId: path.conditionId, keyId: ctx.principal.keyId }, 'condition satisfied');
    return { status: 200, body: toApplication(record) };
  },

  waiveCondition: async ({ path, body }, ctx) => {
    const record = await resolveConditionAsUnderwriter(ctx, ctx.principal.accountId, path.mortgageId, path.conditionId, {
      status: 'waived',
      note: body.note,
      actor: { kind: 'key', id: ctx.principal.keyId },
    });
    ctx.log.info({ mortgageId: record.mortgageId, conditionId: path.conditionId, keyId: ctx.principal.keyId }, 'condition waived');
    return { status: 200, body: toApplication(record) };
  },

  withdrawApplication: async ({ path }, ctx) => {
    const record = await withdrawApplication(ctx, ctx.principal.accountId, path.mortgageId);
    return { status: 200, body: toApplication(record) };
  },
} satisfies OperationHandlers;
