/**
 * The shape of a bank token: `bnk_tok_<partner key>_<partner's token>`.
 *
 * - `bnk_tok_` lets secret scanners and people recognise it, and can never be mistaken for an API
 *   key (`mos_live_…`): the edge refuses each where the other is expected.
 * - `<partner key>` is the 26-character suffix of the partner's id (`bnk-<key>`): it names the
 *   partner whose connector resolves the token.
 * - `<partner's token>` is opaque to the service: for an `http` partner, the access token the
 *   partner issued (sent back to its introspection endpoint); for the sandbox, a sealed claim set.
 */
const BANK_TOKEN_PREFIX = 'bnk_tok_';

/** Characters of RFC 6750 `b64token`, bounded: the partner's part must fit an Authorization header. */
const TOKEN_PATTERN = /^bnk_tok_([0-9a-z]{26})_([A-Za-z0-9\-._~+/]{16,2048}=*)$/;

export interface ParsedBankToken {
  partnerId: string;
  /** The partner's own token (the part after the partner key). */
  partnerToken: string;
}

/** The partner and the partner's token, or null when `token` is not a bank token. */
export function parseBankToken(token: string): ParsedBankToken | null {
  const match = TOKEN_PATTERN.exec(token);
  if (!match) return null;
  return { partnerId: `bnk-${match[1]}`, partnerToken: match[2]! };
}

export function formatBankToken(partnerId: string, partnerToken: string): string {
  const key = partnerId.replace(/^bnk-/, '');
  const token = `${BANK_TOKEN_PREFIX}${key}_${partnerToken}`;
  if (!parseBankToken(token)) throw new Error('not a valid bank token');
  return token;
}

/** `bnk_tok_<key>_` for a partner: what a partner prefixes to the tokens it issues. */
export function bankTokenPrefixFor(partnerId: string): string {
  return `${BANK_TOKEN_PREFIX}${partnerId.replace(/^bnk-/, '')}_`;
}
