/**
 * Bank verification: `POST /v1/banks/verify`, authenticated by a bank partner's token (the
 * `bankToken` scheme), never by an API key.
 */
import type { components } from '../../generated/api.d.ts';
import { NAME_MATCH_THRESHOLD } from '../domain/banks/nameMatch.ts';
import { verifyBankDetails, type BankTokenPrincipal } from '../services/bankVerification.ts';
import type { BankVerificationRecord } from '../store/bankVerifications.ts';
import type { OperationHandlers } from './types.ts';

type BankVerification = components['schemas']['BankVerification'];

export function toBankVerification(v: BankVerificationRecord): BankVerification {
  return {
    verificationId: v.verificationId,
    mortgageId: v.mortgageId,
    verified: v.verified,
    accountMask: v.accountMask,
    nameMatch: { score: v.nameScore, outcome: v.nameOutcome, threshold: NAME_MATCH_THRESHOLD },
    failedChecks: v.failedChecks,
    checkedAt: v.checkedAt,
  };
}

export const bankOperations = {
  verifyBankDetails: async (input, ctx) => {
    const principal = ctx.security.bankToken as BankTokenPrincipal;
    const verification = await verifyBankDetails({ ...ctx.services, log: ctx.log }, principal, {
      mortgageId: input.body.mortgageId,
      accountNumber: input.body.applicant.accountNumber,
    });
    return { status: 200, body: toBankVerification(verification) };
  },
} satisfies OperationHandlers;
