/**
 * Which applications a year's LAR holds and the action each is reported with (Reg C 1003.4(a)(8),
 * FIG field 11 "Action Taken").
 *
 * An application is reported for the calendar year of its final action, once it was submitted
 * (a draft is not yet an application; a draft withdrawn was never one). The service's statuses
 * and their actions:
 *
 * | status | Action Taken | action taken date |
 * |---|---|---|
 * | `clear_to_close` | 1 Loan originated | when it became clear to close (its last change) |
 * | `approved` | 2 Application approved but not accepted | the decision |
 * | `declined` | 3 Application denied | the decision |
 * | `withdrawn` (after submission) | 4 Application withdrawn by applicant | the withdrawal |
 * | `submitted`, `referred` | not reported: no final action yet | |
 *
 * Why approved is 2 and clear to close is 1: the service does not record the closing. An approval
 * whose closing conditions were never cleared is, at the end of the year, an approval the
 * applicant did not take up; clear to close is the service's last step before funding. The lender
 * changes a row by hand where the facts differ (an approval that closed elsewhere in its systems;
 * the closing date of an origination). The service has no "incomplete" status, so code 5 (file
 * closed for incompleteness) is never produced; a decline for missing data is a denial (3) with
 * reason 7, credit application incomplete.
 *
 * Dates are UTC calendar dates.
 */
import type { LarApplication } from './source.ts';

type ActionTaken = '1' | '2' | '3' | '4';

export interface FinalAction {
  action: ActionTaken;
  /** ISO 8601 time of the final action. */
  at: string;
}

export function finalActionOf(app: Pick<LarApplication, 'status' | 'submittedAt' | 'decidedAt' | 'withdrawnAt' | 'updatedAt'>): FinalAction | null {
  if (app.submittedAt === null) return null;
  switch (app.status) {
    case 'clear_to_close':
      return { action: '1', at: app.updatedAt };
    case 'approved':
      return app.decidedAt === null ? null : { action: '2', at: app.decidedAt };
    case 'declined':
      return app.decidedAt === null ? null : { action: '3', at: app.decidedAt };
    case 'withdrawn':
      return app.withdrawnAt === null ? null : { action: '4', at: app.withdrawnAt };
    default:
      return null;
  }
}

/** `YYYYMMDD` of an ISO 8601 time, in UTC (the FIG's date format). */
export function figDate(iso: string): string {
  const d = new Date(iso);
  const y = String(d.getUTCFullYear()).padStart(4, '0');
  return `${y}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
}

/** The first instant of `year` and of the next, for reading the year's applications. */
export function yearBounds(year: number): { from: string; to: string } {
  return { from: new Date(Date.UTC(year, 0, 1)).toISOString(), to: new Date(Date.UTC(year + 1, 0, 1)).toISOString() };
}

export function isReportable(app: Parameters<typeof finalActionOf>[0], year: number): boolean {
  const final = finalActionOf(app);
  return final !== null && new Date(final.at).getUTCFullYear() === year;
}
