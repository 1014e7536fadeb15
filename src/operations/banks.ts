/**
 * Bank verification: `POST /v1/banks/verify`, authenticated by a bank partner's token (the
 * `bankToken` scheme), never by an API key.
 */
import type { OperationHandlers } from '../contract/handlers.ts';
import type { BankTokenPrincipal } from '../contract/principals.ts';
import { toBankVerification, verifyBankDetails } from '../services/bankVerification.ts';

export const bankOperations = {
  verifyBankDetails: async (input, ctx) => {
    const principal = ctx.security.bankToken as BankTokenPrincipal;
    const verification = await verifyBankDetails(ctx, principal, {
      mortgageId: input.body.mortgageId,
      accountNumber: input.body.applicant.accountNumber,
    });
    return { status: 200, body: toBankVerification(verification) };
  },
} satisfies OperationHandlers;
