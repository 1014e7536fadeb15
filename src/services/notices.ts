/**
 * Adverse action notices (ECOA, 12 CFR 1002.9): made in the transaction of a decline (automatic
 * or a reviewer's), with `application.adverse_action_due`; listed and downloaded as they were
 * made; their delivery recorded by an admin; and a reminder (`application.adverse_action_reminder`)
 * once 25 days have passed undelivered, by a sweep on each environment's clock (the test clock
 * moves it in test mode, as it moves rate locks' expiry).
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode, liveAccountId } from '../domain/accounts/environments.ts';
import { ECOA_AGENCY_BEFORE_SETTINGS, noticeDates, scoreDisclosureOf, type NoticeContent } from '../domain/adverseAction/notice.ts';
import { chosenReasons, reasonsFromDecision, scoreWasUsed, type NoticeReasonCode } from '../domain/adverseAction/reasons.ts';
import { renderNoticeHtml } from '../domain/adverseAction/renderHtml.ts';
import { renderNoticePdf } from './noticePdf.ts';
import { fail } from '../errors.ts';
import { publish } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { findAccount } from '../store/accounts.ts';
import type { ApplicationFields } from '../store/applications.ts';
import { findLender } from '../store/lender.ts';
import {
  dueNotices,
  dueReminders,
  findNotice,
  insertNotice,
  markDelivered,
  markReminded,
  noticeFile,
  noticesOf,
  storeNoticePdf,
  type DeliveryMethod,
  type NoticeRecord,
} from '../store/notices.ts';
import type { SweepScope } from '../store/rateLocks.ts';
import { simulatedClocks } from '../store/testClocks.ts';
import type { Tx } from '../store/store.ts';
import { recordAudit } from './audit.ts';
import { dueList, type DueList } from './desk.ts';
import { environmentNow } from './environmentClock.ts';
import { requireApplication } from './applicationLookup.ts';

export type Notice = components['schemas']['AdverseActionNotice'];

export function toNotice(n: NoticeRecord): Notice {
  const { reasons, scoreDisclosure, lender } = n.content;
  return {
    noticeId: n.noticeId,
    mortgageId: n.mortgageId,
    type: 'adverse_action',
    status: n.status,
    action: 'declined',
    reasons: reasons as Notice['reasons'],
    creditScoreDisclosure: scoreDisclosure as Notice['creditScoreDisclosure'],
    // A notice made before lenders stated their agency holds none: it named the one the service then did.
    lender: { ...lender, ecoaAgency: 'ecoaAgency' in lender ? lender.ecoaAgency : ECOA_AGENCY_BEFORE_SETTINGS } as Notice['lender'],
    decidedAt: n.decidedAt,
    dueAt: n.dueAt,
    delivery: n.delivery,
    createdAt: n.createdAt,
    livemode: isLivemode(n.accountId),
  };
}

/**
 * Makes the notice of a declined application, in the decline's transaction: reasons chosen by the
 * reviewer, or mapped from the decision's failed rules; the score disclosure when the decision used
 * a score; the lender as the account has it now. Reads nothing of the applicant's demographics.
 */
export async function makeDeclineNotice(tx: Tx, record: ApplicationFields, chosen: readonly NoticeReasonCode[] | undefined): Promise<NoticeRecord> {
  const decision = record.decision!;
  const reasons = chosen && chosen.length > 0 ? chosenReasons(chosen) : reasonsFromDecision(decision.reasons);
  if (reasons.length === 0) throw new Error(`declined application ${record.mortgageId} has no failed rule to give as a reason`);
  const live = liveAccountId(record.accountId);
  const lender = await findLender(tx, live);
  const account = await findAccount(tx, live);
  const decidedAt = record.decidedAt!;
  const { dueAt, remindAt } = noticeDates(decidedAt);
  const content: NoticeContent = {
    noticeId: newId('ntc', Date.parse(decidedAt)),
    mortgageId: record.mortgageId,
    applicantName: record.applicantName,
    amount: record.amount,
    action: 'declined',
    decidedBy: decision.decidedBy,
    decidedAt,
    dueAt,
    reasons,
    scoreDisclosure: scoreWasUsed(decision.reasons) && record.creditScore !== null ? scoreDisclosureOf(record.creditScore) : null,
    lender: lender
      ? { name: lender.name, address: lender.address, ecoaAgency: lender.ecoaAgency ?? null }
      : { name: account?.name ?? 'The lender', address: null, ecoaAgency: null },
  };
  const notice: NoticeRecord = {
    noticeId: content.noticeId,
    accountId: record.accountId,
    mortgageId: record.mortgageId,
    status: 'due',
    content,
    decidedAt,
    dueAt,
    remindAt,
    remindedAt: null,
    delivery: null,
    createdAt: decidedAt,
  };
  // The PDF is rendered at its first download (noticeContent), not here: pdf-lib's milliseconds a
  // decline cost a quarter of the submissions a second when 6 % of them declined (npm run bench -- submit).
  await insertNotice(tx, notice, { html: renderNoticeHtml(content) });
  await publish(tx, {
    accountId: record.accountId,
    occurredAt: new Date(decidedAt),
    payload: { event: 'application.adverse_action_due', mortgageId: record.mortgageId, noticeId: notice.noticeId, status: 'declined', dueAt, timestamp: decidedAt },
  });
  return notice;
}

const noNotice = (noticeId: string) => fail.notFound(`No notice ${noticeId} of this application.`);

export async function listNotices(ctx: AppContext, accountId: string, mortgageId: string): Promise<NoticeRecord[]> {
  return ctx.store.read(async (db) => {
    await requireApplication(db, accountId, mortgageId);
    return noticesOf(db, accountId, mortgageId);
  });
}

export async function noticeContent(ctx: AppContext, accountId: string, mortgageId: string, noticeId: string, format: 'pdf' | 'html'): Promise<Buffer> {
  const file = await ctx.store.read((db) => noticeFile(db, accountId, mortgageId, noticeId, format));
  if (file === undefined) throw noNotice(noticeId);
  if (file !== null) return file;
  // The first download renders the PDF from the notice as stored, and keeps it: the same bytes each time after.
  const notice = await ctx.store.read((db) => findNotice(db, accountId, mortgageId, noticeId));
  if (!notice) throw noNotice(noticeId);
  const pdf = await renderNoticePdf(notice.content);
  await ctx.store.transaction((tx) => storeNoticePdf(tx, accountId, noticeId, pdf));
  return Buffer.from(pdf);
}

/**
 * Records the notice's delivery. `deliveredAt` is judged against the environment's clock (the test
 * clock in test mode): not in the future, not before the decision.
 */
export async function recordNoticeDelivery(
  ctx: AppContext,
  accountId: string,
  mortgageId: string,
  noticeId: string,
  delivery: { method: DeliveryMethod; deliveredAt: string },
): Promise<NoticeRecord> {
  const deliveredAt = new Date(delivery.deliveredAt);
  return ctx.store.transaction(async (tx) => {
    const notice = await findNotice(tx, accountId, mortgageId, noticeId);
    if (!notice) throw noNotice(noticeId);
    if (notice.status === 'delivered') {
      throw fail.conflict('notice_already_delivered', `Notice ${noticeId} was recorded as delivered at ${notice.delivery!.deliveredAt}.`);
    }
    const now = await environmentNow(ctx, tx, accountId);
    const pointer = [{ pointer: '/deliveredAt', message: '' }];
    if (deliveredAt.getTime() > now.getTime()) {
      throw fail.refused('delivered_in_future', `deliveredAt ${deliveredAt.toISOString()} is after now (${now.toISOString()}).`, {
        errors: [{ ...pointer[0]!, message: 'must not be in the future' }],
      });
    }
    if (deliveredAt.getTime() < Date.parse(notice.decidedAt)) {
      throw fail.refused('delivered_before_decision', `deliveredAt ${deliveredAt.toISOString()} is before the decision (${notice.decidedAt}).`, {
        errors: [{ ...pointer[0]!, message: 'must not be before the decision' }],
      });
    }
    const at = deliveredAt.toISOString();
    if (!(await markDelivered(tx, accountId, noticeId, delivery.method, at))) throw fail.conflict('notice_already_delivered', `Notice ${noticeId} was just recorded as delivered.`);
    await recordAudit(tx, ctx, {
      accountId,
      action: 'notice.delivered',
      target: { type: 'notice', id: noticeId },
      change: { before: { status: 'due' }, after: { status: 'delivered', method: delivery.method, deliveredAt: at } },
    });
    return { ...notice, status: 'delivered', delivery: { method: delivery.method, deliveredAt: at } };
  });
}

const SWEEP_BATCH = 100;

/** One pass over a scope at `now`: every due, unreminded notice past its reminder time gets its reminder, once. */
async function sweepScope(ctx: AppContext, scope: SweepScope, now: Date): Promise<number> {
  const nowIso = now.toISOString();
  let reminded = 0;
  for (;;) {
    const done = await ctx.store.transaction(async (tx) => {
      const due = await dueReminders(tx, scope, nowIso, SWEEP_BATCH);
      for (const notice of due) {
        if (!(await markReminded(tx, notice.accountId, notice.noticeId, nowIso))) continue;
        await publish(tx, {
          accountId: notice.accountId,
          occurredAt: now,
          payload: {
            event: 'application.adverse_action_reminder',
            mortgageId: notice.mortgageId,
            noticeId: notice.noticeId,
            status: 'declined',
            dueAt: notice.dueAt,
            timestamp: nowIso,
          },
        });
        reminded++;
      }
      return due.length < SWEEP_BATCH;
    });
    if (done) return reminded;
  }
}

/** The reminders of one environment on its own clock (after its test clock moved). */
export async function sweepNoticeRemindersOf(ctx: AppContext, scope: { environmentId: string }): Promise<number> {
  const now = await ctx.store.read((db) => environmentNow(ctx, db, scope.environmentId));
  return sweepScope(ctx, scope, now);
}

/** One run of the background job: every environment on real time, then each test environment on its simulated clock. */
export async function sweepNoticeReminders(ctx: AppContext): Promise<number> {
  let total = await sweepScope(ctx, { realTime: true }, ctx.clock.now());
  const clocks = await ctx.store.read((db) => simulatedClocks(db));
  for (const clock of clocks) total += await sweepNoticeRemindersOf(ctx, { environmentId: clock.environmentId });
  return total;
}

/** A notice on the desk's list (due or overdue on the environment's clock: see dueList), with its applicant. */
export interface DeskNotice {
  noticeId: string;
  mortgageId: string;
  applicantName: string;
  decidedAt: string;
  dueAt: string;
}

/** The environment's undelivered notices, soonest due first, and how many more are undelivered. */
export async function noticesDue(ctx: AppContext, accountId: string, limit: number): Promise<DueList<DeskNotice>> {
  return dueList(ctx, accountId, async (db) => {
    const due = await dueNotices(db, accountId, limit);
    return {
      total: due.total,
      items: due.items.map((n) => ({ noticeId: n.noticeId, mortgageId: n.mortgageId, applicantName: n.content.applicantName, decidedAt: n.decidedAt, dueAt: n.dueAt })),
    };
  });
}
