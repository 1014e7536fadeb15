/** The Loan Estimate of an application: its figures and clock (JSON, or PDF with `Accept: application/pdf`), and the lender's record of delivery. */
import { loanEstimatePdf } from '../services/loanEstimatePdf.ts';
import { getLoanEstimate, markLoanEstimateDelivered } from '../services/loanEstimates.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

/** True when the caller ranks application/pdf in Accept at least as high as JSON. */
function wantsPdf(accept: string | string[] | undefined): boolean {
  const header = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  let pdf = -1;
  let json = -1;
  for (const part of header.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (type === 'application/pdf') pdf = Math.max(pdf, q);
    if (type === 'application/json') json = Math.max(json, q);
  }
  return pdf > 0 && pdf >= json;
}

export const loanEstimateOperations = {
  getLoanEstimate: async ({ path, headers }, ctx) => {
    const estimate = await getLoanEstimate(ctx, ctx.principal.accountId, path.mortgageId);
    if (!wantsPdf(headers.accept)) return { status: 200, body: estimate };
    return {
      status: 200,
      raw: Buffer.from(await loanEstimatePdf(estimate)),
      contentType: 'application/pdf',
      headers: { 'Content-Disposition': `attachment; filename="${estimate.mortgageId}-loan-estimate.pdf"` },
    };
  },

  markLoanEstimateDelivered: async ({ path, body }, ctx) => ({
    status: 200,
    body: await markLoanEstimateDelivered(ctx, ctx.principal.accountId, path.mortgageId, body),
  }),
} satisfies OperationHandlers;
