/**
 * Bank verification: does the account a bank token names belong to the applicant of a mortgage
 * application, with the account number the caller sent?
 *
 * Scope of a bank token: it is tied to a partner, not to an account. The application is found by
 * its id across accounts; a partner serves every account unless the operator restricted it, and a
 * restricted partner's token gets 404 for applications of accounts it does not serve (exactly as
 * for an id that does not exist, so nothing is revealed). A token is also bound to the accounts
 * its partner served when it was issued (src/services/bankTokens.ts): an account the partner
 * came to serve later is 404 for it too. Test mode splits the same way: a token
 * of the test-mode sandbox bank reaches only the test environment it was issued to, and every
 * other token only live applications; anything else is 404 too.
 *
 * Order of refusals: 429 for a client address with too many failed token checks (at the edge) →
 * 401 token (format, partner, and the partner's own check of the token; 429 instead of asking a
 * partner that has refused too many tokens this minute) → 429 partner quota of proven tokens (at
 * the edge) → 400 body → 404 application → 409 withdrawn → 429 failed-attempt limit → partner's
 * account lookup (401 when the account is gone, 502 when the partner fails) → verdict.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import type { BankTokenPrincipal } from '../contract/principals.ts';
import { connectorFor } from '../banks/connectors.ts';
import { BankPartnerBadResponse, BankPartnerUnavailable, BankTokenRejected } from '../banks/connector.ts';
import { bankKeys } from '../banks/secrets.ts';
import { bankTokenBinding } from './bankTokens.ts';
import { parseBankToken } from '../banks/tokenFormat.ts';
import { looksLikeApiKey } from '../domain/accounts/apiKeyFormat.ts';
import { accountMask, accountNumberDigest, accountNumbersMatch } from '../domain/banks/accountNumber.ts';
import { NAME_MATCH_THRESHOLD, scoreNameMatch } from '../domain/banks/nameMatch.ts';
import { attemptDecision, FAILED_ATTEMPT_WINDOW_MS, MAX_FAILED_ATTEMPTS, verdict } from '../domain/banks/verification.ts';
import { WindowCounter } from '../domain/limits/windowCounter.ts';
import { isLivemode, liveAccountId } from '../domain/accounts/environments.ts';
import { AppError, fail } from '../errors.ts';
import { newId } from '../ids.ts';
import { findApplication, findApplicationForUpdate } from '../store/applications.ts';
import { findBankPartner, partnerServesAccount } from '../store/bankPartners.ts';
import { bindingReachesAccount } from '../store/bankTokens.ts';
import { satisfyByEvidence } from './conditions.ts';
import {
  applicationOwner,
  failedVerificationTimes,
  insertBankVerification,
  listBankVerifications,
  type BankVerificationRecord,
} from '../store/bankVerifications.ts';
import { requireApplication } from './applicationLookup.ts';

export type BankVerification = components['schemas']['BankVerification'];

export function toBankVerification(v: BankVerificationRecord): BankVerification {
  return {
    verificationId: v.verificationId,
    mortgageId: v.mortgageId,
    verified: v.verified,
    accountMask: v.accountMask,
    nameMatch: { score: v.nameScore, outcome: v.nameOutcome, threshold: NAME_MATCH_THRESHOLD },
    failedChecks: v.failedChecks,
    checkedAt: v.checkedAt,
    livemode: isLivemode(v.accountId),
  };
}

/** The bank verifications of an application of the account, oldest first (masks only: no account number is kept). */
export async function listApplicationVerifications(ctx: AppContext, accountId: string, mortgageId: string): Promise<BankVerification[]> {
  return ctx.store.read(async (db) => {
    await requireApplication(db, accountId, mortgageId);
    return (await listBankVerifications(db, accountId, mortgageId)).map(toBankVerification);
  });
}

const RETRY_PARTNER_AFTER_SECONDS = 30;

/** The 502 for a partner failure; the reason goes to the log only (it may name addresses or partner internals). */
function partnerError(err: BankPartnerUnavailable | BankPartnerBadResponse): AppError {
  if (err instanceof BankPartnerUnavailable) {
    return fail.upstreamFailed(
      'bank_partner_unavailable',
      `The bank partner could not be reached or kept failing; nothing was checked or recorded. Retry after ${RETRY_PARTNER_AFTER_SECONDS} seconds.`,
      RETRY_PARTNER_AFTER_SECONDS,
    );
  }
  return fail.upstreamFailed('bank_partner_invalid_response', 'The bank partner answered something the service cannot trust; nothing was checked or recorded.');
}

async function callPartner<T>(ctx: AppContext, partnerId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof BankPartnerUnavailable || err instanceof BankPartnerBadResponse) {
      ctx.log.warn({ partnerId, reason: err.message, kind: err.name }, 'bank partner failed');
      throw partnerError(err);
    }
    throw err;
  }
}

/**
 * The check of the bearer token of `POST /v1/banks/verify`: a well-formed bank token of a known,
 * enabled partner that the partner says is live. Throws `unauthenticated` (401) or an AppError
 * (502 when the partner cannot say; 429 while the partner's refusals are capped).
 *
 * A token the sandbox proves locally costs nothing to check. A token of an `http` partner costs
 * the partner an introspection call, so refusals are capped per partner, all clients together
 * (BANK_AUTH_FAILURES_PER_PARTNER_PER_MINUTE): once a partner has refused that many tokens in a
 * minute, tokens are not sent to it until the minute ends. Each check holds a place in that count
 * while the partner is asked, so concurrent junk cannot slip past the cap together; a token the
 * partner accepts (or a partner failure) gives its place back.
 */
export function bankTokenAuthenticator(ctx: AppContext): (token: string | null) => Promise<BankTokenPrincipal> {
  const refusals = new WindowCounter(ctx.config.bank.authFailuresPerPartnerPerMinute);

  return async function authenticateBankToken(token: string | null): Promise<BankTokenPrincipal> {
    if (token === null) throw fail.unauthenticated("Send the bank partner's token as Authorization: Bearer <bank token>.");
    if (looksLikeApiKey(token)) throw fail.unauthenticated("This operation takes a bank partner's token (bnk_tok_…), not an API key.");
    const parsed = parseBankToken(token);
    if (!parsed) throw fail.unauthenticated('The bearer token is not a bank token (bnk_tok_…).');
    const partner = await ctx.store.read((db) => findBankPartner(db, parsed.partnerId));
    // An unknown and a disabled partner read the same: the token is not valid.
    if (!partner || partner.disabledAt) throw fail.unauthenticated('The bank token is not valid.');
    const connector = await callPartner(ctx, partner.partnerId, () => connectorFor(partner, ctx));
    const place = connector.provesLocally ? null : refusals.take(partner.partnerId, ctx.clock.now().getTime());
    if (place && !place.allowed) {
      ctx.log.warn({ partnerId: partner.partnerId, limit: refusals.limit }, 'bank partner refusal cap reached; tokens not sent to the partner');
      throw fail.rateLimited(
        'bank_partner_refusals_exceeded',
        `This bank partner has refused ${refusals.limit} tokens in the last minute; new tokens are not sent to it for checking until ` +
          `the minute ends. Retry after ${place.retryAfterSeconds} seconds.`,
        place.retryAfterSeconds,
      );
    }
    try {
      const grant = await callPartner(ctx, partner.partnerId, () => connector.authenticate(parsed.partnerToken));
      place?.release();
      const binding = await bankTokenBinding(ctx, partner, token, grant.expiresAt);
      return { kind: 'bankToken', partner, partnerToken: parsed.partnerToken, grant, binding };
    } catch (err) {
      if (err instanceof BankTokenRejected) throw fail.unauthenticated(err.message);
      place?.release();
      throw err;
    }
  };
}

/** Whether the token may verify applications of the environment `owner`. */
function tokenReaches(principal: BankTokenPrincipal, owner: string): boolean {
  const testEnvironment = principal.grant.testEnvironmentId;
  return testEnvironment === undefined ? isLivemode(owner) : owner === testEnvironment;
}

export interface VerificationRequest {
  mortgageId: string;
  accountNumber: string;
}

function attemptsExceeded(retryAfterSeconds: number): AppError {
  return fail.rateLimited(
    'verification_attempts_exceeded',
    `This application has had ${MAX_FAILED_ATTEMPTS} failed bank verifications in the last hour; retry after ${retryAfterSeconds} seconds.`,
    retryAfterSeconds,
  );
}

/** Checks the account of the token against the application and records the outcome (history kept). */
export async function verifyBankDetails(ctx: AppContext, principal: BankTokenPrincipal, request: VerificationRequest): Promise<BankVerificationRecord> {
  const { store, clock } = ctx;
  const { partner } = principal;
  const windowStart = () => new Date(clock.now().getTime() - FAILED_ATTEMPT_WINDOW_MS).toISOString();
  const keys = await bankKeys(ctx.config);
  const submittedNumberHash = accountNumberDigest(keys.accountNumberHash, request.accountNumber).toString('hex');

  const application = await store.read(async (db) => {
    const owner = await applicationOwner(db, request.mortgageId);
    if (!owner || !tokenReaches(principal, owner) || !(await partnerServesAccount(db, partner, owner))) return undefined;
    // Bound at issue: an account the partner came to serve after the token was issued is not the token's.
    if (!(await bindingReachesAccount(db, principal.binding, liveAccountId(owner)))) return undefined;
    const found = await findApplication(db, owner, request.mortgageId);
    if (!found) return undefined;
    return { record: found };
  });
  if (!application) throw fail.notFound(`No mortgage application ${request.mortgageId} that this bank partner serves.`);
  const { record } = application;
  if (record.status === 'withdrawn') {
    throw fail.conflict('application_withdrawn', `Mortgage application ${record.mortgageId} was withdrawn; there is nothing to verify.`, { currentStatus: record.status });
  }

  // The partner is asked outside any transaction: a slow partner must not hold the store.
  let account;
  try {
    account = await callPartner(ctx, partner.partnerId, async () =>
      (await connectorFor(partner, ctx)).fetchAccount(principal.grant, principal.partnerToken),
    );
  } catch (err) {
    if (err instanceof BankTokenRejected) throw fail.unauthenticated(err.message);
    throw err;
  }

  // The limit is per linked account, known only once the partner has said which account the token names.
  const linkedAccountHash = accountNumberDigest(keys.accountNumberHash, account.accountNumber).toString('hex');
  const numberMatches = accountNumbersMatch(keys.accountNumberHash, request.accountNumber, account.accountNumber);
  const nameMatch = scoreNameMatch(record.applicantName, account.holderName);
  const outcome = verdict(numberMatches, nameMatch);

  return store.transaction(async (tx) => {
    // Checked where the row is written: concurrent attempts cannot slip past the limit together
    // (on PostgreSQL the application's row lock makes the verifications of one application take turns).
    const locked = await findApplicationForUpdate(tx, record.accountId, record.mortgageId);
    const now = clock.now();
    const after = attemptDecision(await failedVerificationTimes(tx, record.mortgageId, linkedAccountHash, windowStart()), now);
    if (!after.allowed) throw attemptsExceeded(after.retryAfterSeconds);
    const verification: BankVerificationRecord = {
      verificationId: newId('bvf', now.getTime()),
      accountId: record.accountId,
      mortgageId: record.mortgageId,
      partnerId: partner.partnerId,
      verified: outcome.verified,
      accountMask: accountMask(request.accountNumber),
      accountNumberHash: submittedNumberHash,
      linkedAccountHash,
      nameScore: nameMatch.score,
      nameOutcome: nameMatch.outcome,
      failedChecks: outcome.failedChecks,
      checkedAt: now.toISOString(),
    };
    await insertBankVerification(tx, verification);
    // A verified check satisfies the open bank_account_verified condition by itself.
    if (locked && verification.verified) {
      await satisfyByEvidence(tx, locked, { kind: 'bank_verification', verified: true }, { verificationId: verification.verificationId }, now);
    }
    ctx.log.info(
      {
        verificationId: verification.verificationId,
        mortgageId: verification.mortgageId,
        partnerId: partner.partnerId,
        verified: verification.verified,
        failedChecks: verification.failedChecks,
        nameScore: verification.nameScore,
      },
      'bank verification recorded',
    );
    return verification;
  });
}
