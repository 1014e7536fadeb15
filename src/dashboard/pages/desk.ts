/**
 * The underwriter's desk's forms on an application (admins only, as the operations they stand
 * for): approve or decline a referred application with a reason (required here, optional in the
 * API) and, on approval, a condition of the reviewer's own; add a condition; satisfy or waive an
 * open one with a note. Each form is the operation's request body (field names are JSON
 * Pointers), checked against the contract; a refusal shows beside the form.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { fail } from '../../errors.ts';
import type { OperationId } from '../../contract/handlers.ts';
import { reviewApplication } from '../../services/applicationMoves.ts';
import { addCondition, resolveConditionAsUnderwriter, type Actor } from '../../services/conditions.ts';
import type { ActiveSession } from '../../services/sessions.ts';
import { decodeForm } from '../forms.ts';
import { accountOf, actingAs, formErrors, formOf, redirect, requireRoleFor, submittedValues } from '../page.ts';
import { checkContract, requestSchema } from '../validation.ts';
import { applicationPage } from './applications.ts';

type FormBody = { note?: string; conditions?: Array<Record<string, unknown>>; type?: string; description?: string; dueBefore?: string };

const actorOf = (session: ActiveSession): Actor => ({ kind: 'user', id: session.user.userId });

/** The dashboard asks a reason for every decision and every satisfied or waived condition. */
function requireNote(body: FormBody): void {
  if (!body.note || body.note.trim() === '') throw fail.validation('Give a reason: it is kept with the decision.', [{ pointer: '/note', message: 'is required' }]);
}

/**
 * Runs a desk form: decodes it as `operationId`'s body, checks it, calls `act`, then redirects to
 * the application with `done`; a refusal (400, 409, 422) shows the application again with the
 * form's messages under `formName`.
 */
async function deskForm(
  koa: Context,
  ctx: AppContext,
  operationId: OperationId,
  formName: string,
  act: (session: ActiveSession, body: FormBody) => Promise<unknown>,
  done: string,
): Promise<void> {
  const session = requireRoleFor(koa, operationId);
  const form = formOf(koa);
  try {
    const { body } = decodeForm<FormBody>(form, requestSchema(operationId));
    await act(session, body);
    redirect(koa, `/dashboard/applications/${koa.params.mortgageId}?done=${done}`);
  } catch (err) {
    const shown = formErrors(err);
    if (!shown) throw err;
    await applicationPage(koa, ctx, { forms: { [formName]: { values: submittedValues(form), errors: shown.fields, message: shown.message } } }, 400);
  }
}

export function deskRoutes(router: Router, ctx: AppContext): void {
  router.post('application.approve', '/applications/:mortgageId/approve', (koa) =>
    deskForm(
      koa,
      ctx,
      'approveApplication',
      'approve',
      async (session, body) => {
        // The reviewer's condition is optional: without a description none is attached.
        const conditions = (body.conditions ?? []).filter((c) => typeof c.description === 'string' && c.description.trim() !== '');
        const request = { note: body.note, ...(conditions.length > 0 ? { conditions } : {}) };
        requireNote(body);
        checkContract('approveApplication', request);
        await reviewApplication(actingAs(ctx, koa, session), accountOf(session), koa.params.mortgageId!, {
          action: 'approve',
          reviewer: actorOf(session),
          note: body.note,
          conditions: request.conditions as Parameters<typeof reviewApplication>[3]['conditions'],
        });
        ctx.log.info({ mortgageId: koa.params.mortgageId, userId: session.user.userId }, 'referred application approved in the dashboard');
      },
      'approved',
    ),
  );

  router.post('application.decline', '/applications/:mortgageId/decline', (koa) =>
    deskForm(
      koa,
      ctx,
      'declineApplication',
      'decline',
      async (session, body) => {
        requireNote(body);
        checkContract('declineApplication', { note: body.note });
        await reviewApplication(actingAs(ctx, koa, session), accountOf(session), koa.params.mortgageId!, { action: 'decline', reviewer: actorOf(session), note: body.note });
        ctx.log.info({ mortgageId: koa.params.mortgageId, userId: session.user.userId }, 'referred application declined in the dashboard');
      },
      'declined',
    ),
  );

  router.post('application.conditions.add', '/applications/:mortgageId/conditions', (koa) =>
    deskForm(
      koa,
      ctx,
      'addCondition',
      'add-condition',
      async (session, body) => {
        const request = { type: body.type, description: body.description, dueBefore: body.dueBefore };
        checkContract('addCondition', request);
        await addCondition(actingAs(ctx, koa, session), accountOf(session), koa.params.mortgageId!, request as Parameters<typeof addCondition>[3]);
      },
      'condition-added',
    ),
  );

  for (const [verb, status, operationId] of [
    ['satisfy', 'satisfied', 'satisfyCondition'],
    ['waive', 'waived', 'waiveCondition'],
  ] as const) {
    router.post(`application.conditions.${verb}`, `/applications/:mortgageId/conditions/:conditionId/${verb}`, (koa) =>
      deskForm(
        koa,
        ctx,
        operationId,
        `${verb}-${koa.params.conditionId}`,
        async (session, body) => {
          requireNote(body);
          checkContract(operationId, { note: body.note });
          await resolveConditionAsUnderwriter(actingAs(ctx, koa, session), accountOf(session), koa.params.mortgageId!, koa.params.conditionId!, {
            status,
            note: body.note!,
            actor: actorOf(session),
          });
        },
        `condition-${status}`,
      ),
    );
  }
}
