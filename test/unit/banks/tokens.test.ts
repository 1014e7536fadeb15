import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BankTokenRejected } from '../../../src/banks/connector.ts';
import { mintSandboxToken, openSandboxToken, SandboxConnector } from '../../../src/banks/sandbox.ts';
import { bankTokenPrefixFor, formatBankToken, parseBankToken } from '../../../src/banks/tokenFormat.ts';
import type { Clock } from '../../../src/clock.ts';

const partnerId = 'bnk-01jdz8k3n4q2v6x9b7c5t1r0aa';
const otherPartner = 'bnk-01jdz8k3n4q2v6x9b7c5t1r0ab';
const key = randomBytes(32);
const issued = new Date('2026-11-21T18:00:00.000Z');
const clockAt = (date: Date): Clock => ({ now: () => date });

describe('parseBankToken', () => {
  it('reads the partner and the partner token of a bank token', () => {
    expect(parseBankToken('bnk_tok_01jdz8k3n4q2v6x9b7c5t1r0aa_abcdefghijklmnop.qrs')).toEqual({ partnerId, partnerToken: 'abcdefghijklmnop.qrs' });
  });

  it.each([
    ['an API key', 'mos_live_4eC39HqLyjWDarjtT1zdp7dcQ2mHkV9x7Aq0Z3'],
    ['no partner key', 'bnk_tok__abcdefghijklmnop'],
    ['an upper-case partner key', 'bnk_tok_01JDZ8K3N4Q2V6X9B7C5T1R0AA_abcdefghijklmnop'],
    ['a short partner token', 'bnk_tok_01jdz8k3n4q2v6x9b7c5t1r0aa_short'],
    ['a space in the partner token', 'bnk_tok_01jdz8k3n4q2v6x9b7c5t1r0aa_abcdefgh ijklmnop'],
    ['an over-long partner token', `bnk_tok_01jdz8k3n4q2v6x9b7c5t1r0aa_${'a'.repeat(2049)}`],
  ])('refuses %s', (_what, token) => {
    expect(parseBankToken(token)).toBeNull();
  });

  it('round-trips with formatBankToken, which starts with the prefix a partner is told', () => {
    const token = formatBankToken(partnerId, 'partner-issued-token-123');
    expect(token.startsWith(bankTokenPrefixFor(partnerId))).toBe(true);
    expect(parseBankToken(token)).toEqual({ partnerId, partnerToken: 'partner-issued-token-123' });
  });
});

describe('sandbox tokens', () => {
  const account = { holder: 'Jane Doe', accountNumber: '000123456789' };

  it('carry the holder and number sealed: readable only with the key, never in clear', () => {
    const { token, expiresAt } = mintSandboxToken(key, partnerId, account, issued, 3600);
    expect(token.startsWith('bnk_tok_')).toBe(true);
    expect(token).not.toContain('000123456789');
    expect(token).not.toContain('Jane');
    expect(expiresAt).toBe('2026-11-21T19:00:00.000Z');
    const claims = openSandboxToken(key, partnerId, parseBankToken(token)!.partnerToken);
    expect(claims).toMatchObject({ h: 'Jane Doe', n: '000123456789' });
  });

  it("take a holder's name of up to 200 characters counted as the contract counts them (code points, not UTF-16 units)", () => {
    const astral = '𝒜'.repeat(200); // 400 UTF-16 units
    const { token } = mintSandboxToken(key, partnerId, { ...account, holder: astral }, issued, 3600);
    expect(openSandboxToken(key, partnerId, parseBankToken(token)!.partnerToken)).toMatchObject({ h: astral });
    expect(() => mintSandboxToken(key, partnerId, { ...account, holder: '𝒜'.repeat(201) }, issued, 3600)).toThrow(RangeError);
  });

  it('do not open with another key, for another partner, or with one character changed', () => {
    const sealed = parseBankToken(mintSandboxToken(key, partnerId, account, issued, 3600).token)!.partnerToken;
    expect(openSandboxToken(randomBytes(32), partnerId, sealed)).toBeNull();
    expect(openSandboxToken(key, otherPartner, sealed)).toBeNull();
    const i = 20;
    const flipped = sealed.slice(0, i) + (sealed[i] === 'A' ? 'B' : 'A') + sealed.slice(i + 1);
    expect(openSandboxToken(key, partnerId, flipped)).toBeNull();
    expect(openSandboxToken(key, partnerId, 'not-a-sealed-token')).toBeNull();
  });

  it('the sandbox connector answers the holder and number until the token expires', async () => {
    const { token } = mintSandboxToken(key, partnerId, account, issued, 3600);
    const partnerToken = parseBankToken(token)!.partnerToken;
    const live = new SandboxConnector(key, partnerId, clockAt(new Date(issued.getTime() + 3599_000)));
    const grant = await live.authenticate(partnerToken);
    expect(grant).toEqual({ accountRef: 'sandbox-6789', expiresAt: '2026-11-21T19:00:00.000Z' });
    expect(await live.fetchAccount(grant, partnerToken)).toEqual({ holderName: 'Jane Doe', accountNumber: '000123456789' });
    const expired = new SandboxConnector(key, partnerId, clockAt(new Date(issued.getTime() + 3600_000)));
    await expect(expired.authenticate(partnerToken)).rejects.toThrow(BankTokenRejected);
  });

  it('the sandbox connector of another partner rejects the token', async () => {
    const partnerToken = parseBankToken(mintSandboxToken(key, partnerId, account, issued, 3600).token)!.partnerToken;
    await expect(new SandboxConnector(key, otherPartner, clockAt(issued)).authenticate(partnerToken)).rejects.toThrow('not one this partner issued');
  });

  it('refuse to mint for an empty holder or a malformed number', () => {
    expect(() => mintSandboxToken(key, partnerId, { holder: '  ', accountNumber: '000123456789' }, issued, 3600)).toThrow(RangeError);
    expect(() => mintSandboxToken(key, partnerId, { holder: 'Jane Doe', accountNumber: '0001 2345' }, issued, 3600)).toThrow(RangeError);
  });
});
