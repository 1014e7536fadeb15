/**
 * A bank token is bound to the lender accounts its partner serves at issue. Today a partner serves
 * every account until the operator restricts it to a list (src/services/bankPartners.ts); a token
 * keeps the reach its partner had when it was issued, so a later change to the partner's accounts
 * never widens it:
 * - a partner serving every account at issue: the token reaches the accounts that existed then
 *   (not one opened later);
 * - a restricted partner: the token reaches the accounts listed then (not one added later).
 * A later narrowing (an account removed, the partner restricted or disabled) applies at once, since
 * verification also checks what the partner serves now.
 *
 * "At issue" is when the service learns of the token: at minting for the tokens it mints itself
 * (the sandbox banks: POST /v1/test/bank-tokens and the operator's `partner token`), and at its
 * first accepted use for an `http` partner's token, which the partner issues without telling the
 * service (its introspection answer says nothing of when). Only the SHA-256 of a token is kept.
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { bindBankToken, deleteExpiredBankTokens, findBankTokenBinding, type BankTokenBinding } from '../store/bankTokens.ts';

/** The partner fields a binding needs (a register record satisfies it). */
interface Partner {
  partnerId: string;
  restricted: boolean;
}

function bankTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Binds `token` now to what `partner` serves now, unless it is bound already; returns its binding. */
export async function bindBankTokenAtIssue(ctx: AppContext, partner: Partner, token: string, expiresAt: string | null): Promise<BankTokenBinding> {
  const tokenHash = bankTokenHash(token);
  return ctx.store.transaction(async (tx) => {
    const now = ctx.clock.now().toISOString();
    await deleteExpiredBankTokens(tx, now);
    await bindBankToken(tx, { tokenHash, partnerId: partner.partnerId, everyAccount: !partner.restricted, boundAt: now, expiresAt });
    return (await findBankTokenBinding(tx, tokenHash))!;
  });
}

/** The binding of an accepted token: the one made at issue, or (the first time an http partner's token is seen) one made now. */
export async function bankTokenBinding(ctx: AppContext, partner: Partner, token: string, expiresAt: string | null): Promise<BankTokenBinding> {
  const bound = await ctx.store.read((db) => findBankTokenBinding(db, bankTokenHash(token)));
  return bound ?? bindBankTokenAtIssue(ctx, partner, token, expiresAt);
}
