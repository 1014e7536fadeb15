import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accountDetailIssues, emailIssue, normalizeEmail } from '../../../../src/domain/accounts/accountDetails.ts';
import { passwordIssue } from '../../../../src/domain/users/password.ts';
import { encodeHash, needsRehash, parseHash, SCRYPT_PARAMS } from '../../../../src/domain/users/passwordHash.ts';
import { invitationClosedReason } from '../../../../src/domain/users/invitations.ts';
import { sessionIsLive } from '../../../../src/domain/users/sessions.ts';

describe('password rules (OWASP: 12 to 128 characters, no composition rules)', () => {
  it.each([
    ['x'.repeat(11), 'must be at least 12 characters'],
    ['x'.repeat(12), null],
    ['correct horse battery staple', null],
    ['x'.repeat(128), null],
    ['x'.repeat(129), 'must be at most 128 characters'],
    ['🔑'.repeat(12), null], // characters, not UTF-16 units: 12 emoji are 24 units
    ['🔑'.repeat(11), 'must be at least 12 characters'],
  ])('%j → %s', (password, issue) => {
    expect(passwordIssue(password)).toBe(issue);
  });

  it('any text of 12 to 128 characters is accepted, whatever it is made of', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme-ascii', minLength: 12, maxLength: 128 }), (password) => passwordIssue(password) === null));
  });
});

describe('stored password hashes', () => {
  it('carry their cost, and read back to the same parts', () => {
    const parts = { params: SCRYPT_PARAMS, salt: Buffer.alloc(16, 7), hash: Buffer.alloc(32, 9) };
    const stored = encodeHash(parts);
    expect(stored).toMatch(/^\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(parseHash(stored)).toEqual(parts);
    expect(needsRehash(parseHash(stored)!.params)).toBe(false);
    expect(needsRehash({ ln: 14, r: 8, p: 1 })).toBe(true);
  });

  it('anything else is not a hash (never matches)', () => {
    for (const text of ['', 'plain', '$argon2id$v=19$m=65536,t=3,p=4$abc$def', '$scrypt$ln=40,r=8,p=1$AAAA$BBBB']) expect(parseHash(text)).toBeNull();
  });
});

describe('account details (the one rule for the CLI and the sign-up)', () => {
  it('need a name and an email address', () => {
    expect(accountDetailIssues({ name: '', email: 'x' })).toEqual([
      { field: 'name', message: 'must not be empty' },
      { field: 'email', message: 'is not an email address' },
    ]);
    expect(accountDetailIssues({ name: 'Harbor Lending', email: 'ops@harbor.test' })).toEqual([]);
    expect(emailIssue(`${'a'.repeat(250)}@x.io`)).toBe('must be at most 254 characters');
    expect(normalizeEmail('  Ana@Harbor.TEST ')).toBe('ana@harbor.test');
  });

  it('keep to the text rule: no NUL or other control character, no unpaired surrogate, in the name or the email', () => {
    for (const name of ['Harbor\u0000Lending', 'Harbor\u001bLending', 'Harbor \ud800']) {
      expect(accountDetailIssues({ name, email: 'ops@harbor.test' }), JSON.stringify(name)).toEqual([
        { field: 'name', message: 'must not contain control characters (U+0000–U+001F) or unpaired surrogates' },
      ]);
    }
    expect(emailIssue('ops\u0001@harbor.test')).toMatch(/control characters/);
    expect(emailIssue('ops\ud800@harbor.test')).toMatch(/unpaired surrogates/);
  });
});

describe('sessions and invitations end', () => {
  const policy = { idleMs: 30 * 60_000, absoluteMs: 8 * 3_600_000 };
  const t = (iso: string) => Date.parse(iso);
  it('a session ends when idle too long or past its absolute expiry, whichever is first', () => {
    const session = { lastSeenAt: '2026-11-02T09:00:00Z', expiresAt: '2026-11-02T17:00:00Z' };
    expect(sessionIsLive(session, t('2026-11-02T09:29:59Z'), policy)).toBe(true);
    expect(sessionIsLive(session, t('2026-11-02T09:30:00Z'), policy)).toBe(false);
    expect(sessionIsLive({ ...session, lastSeenAt: '2026-11-02T16:59:00Z' }, t('2026-11-02T17:00:00Z'), policy)).toBe(false);
  });

  it('an invitation can be used once, until it is withdrawn or its 7 days are over', () => {
    const open = { expiresAt: '2026-11-09T09:00:00Z', acceptedAt: null, revokedAt: null };
    expect(invitationClosedReason(open, t('2026-11-09T08:59:59Z'))).toBeNull();
    expect(invitationClosedReason(open, t('2026-11-09T09:00:00Z'))).toMatch(/expired/);
    expect(invitationClosedReason({ ...open, acceptedAt: '2026-11-03T00:00:00Z' }, t('2026-11-04T00:00:00Z'))).toMatch(/used/);
    expect(invitationClosedReason({ ...open, revokedAt: '2026-11-03T00:00:00Z' }, t('2026-11-04T00:00:00Z'))).toMatch(/withdrawn/);
  });
});
