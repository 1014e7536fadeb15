/** The Loan Estimate of an application: its figures and clock, and the lender's record of delivery. */
import { getLoanEstimate, markLoanEstimateDelivered } from '../services/loanEstimates.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

export const loanEstimateOperations = {
  getLoanEstimate: async ({ path }, ctx) => ({ status: 200, body: await getLoanEstimate(ctx, ctx.principal.accountId, path.mortgageId) }),

  markLoanEstimateDelivered: async ({ path, body }, ctx) => ({
    status: 200,
    body: await markLoanEstimateDelivered(ctx, ctx.principal.accountId, path.mortgageId, body),
  }),
} satisfies OperationHandlers;
