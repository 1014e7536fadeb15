/**
 * 2026-12-08: the Loan Estimate's clock publishes two event kinds (issue 44):
 * `disclosure.loan_estimate_due` when an application becomes a TRID application, and
 * `disclosure.loan_estimate_overdue` when the end of its third business day passes undelivered.
 * Earlier versions neither receive nor list them.
 */
import { addedEventKinds } from './addedEventKinds.ts';

export const loanEstimateEvents = addedEventKinds({
  version: '2026-12-08',
  name: 'loan-estimate-events',
  description:
    'Two event kinds were added: disclosure.loan_estimate_due (an application became a TRID application; its Loan Estimate is due by the end of the third business day) ' +
    'and disclosure.loan_estimate_overdue (that time passed with the estimate not marked delivered). Earlier versions have neither: they are not delivered to an endpoint ' +
    'on them, not listed in the events feed, and not shown among an endpoint\'s events.',
  kinds: ['disclosure.loan_estimate_due', 'disclosure.loan_estimate_overdue'],
});
