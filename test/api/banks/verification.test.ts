import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sealCredential } from '../../../src/banks/credentials.ts';
import { formatBankToken } from '../../../src/banks/tokenFormat.ts';
import { runAdminCommand } from '../../../src/cli/commands.ts';
import type { Clock } from '../../../src/clock.ts';
import { findBankPartner, updateBankPartner } from '../../../src/store/bankPartners.ts';
import { listBankVerifications } from '../../../src/store/bankVerifications.ts';
import { startFakePartner, type FakePartner } from '../../helpers/fakeBankPartner.ts';
import { postgresContents } from '../../helpers/engine.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';

/** Full account numbers used below: none may appear in a log line, a database file or an export. */
const JANE_NUMBER = '000123456789';
const WRONG_NUMBER = '000123456780';
const HTTP_NUMBER = '987654321012';
const FULL_NUMBERS = [JANE_NUMBER, WRONG_NUMBER, HTTP_NUMBER];

const logLines: string[] = [];
let now = new Date('2026-11-21T18:00:00.000Z');
const clock: Clock = { now: () => now };
const advance = (ms: number) => (now = new Date(now.getTime() + ms));

let app: TestApp;
let lender: TestAccount;
let otherLender: TestAccount;
let partner: FakePartner;
let sandboxPartnerId: string;
let httpPartnerId: string;

const admin = (command: string, flags: Record<string, string>) => runAdminCommand(app.ctx, command, flags);

async function sandboxToken(holder: string, accountNumber = JANE_NUMBER, partnerId = sandboxPartnerId): Promise<string> {
  return (await admin('bank-partner sandbox-token', { partner: partnerId, holder, 'account-number': accountNumber })).token as string;
}

async function newApplication(account: TestAccount, name: string): Promise<string> {
  const { data, response } = await account.client.POST('/v1/applications', { body: { applicant: { name, amount: 350000 }, term: 30 } });
  expect(response.status).toBe(201);
  return data!.mortgageId;
}

function verify(token: string, mortgageId: string, accountNumber: string) {
  return app.clientFor(token).POST('/v1/banks/verify', { body: { mortgageId, applicant: { accountNumber } } });
}

async function recorded(account: TestAccount, mortgageId: string) {
  return app.ctx.store.read((db) => listBankVerifications(db, account.accountId, mortgageId));
}

beforeAll(async () => {
  partner = await startFakePartner('service-credential-abc');
  app = await startTestApp({
    clock,
    env: {
      LOG_LEVEL: 'debug',
      BANK_PARTNER_ALLOWED_HOSTS: '127.0.0.1',
      BANK_PARTNER_TIMEOUT_MS: '300',
      BANK_PARTNER_RETRY_BASE_MS: '10',
    },
    logDestination: { write: (line: string) => void logLines.push(line) },
  });
  lender = await app.newAccount('Harbor Lending');
  otherLender = await app.newAccount('Other Lending');
  sandboxPartnerId = (await admin('bank-partner create', { name: 'Sandbox Bank', connector: 'sandbox' })).partnerId as string;
  httpPartnerId = (
    await admin('bank-partner create', { name: 'First Harbor Bank', connector: 'http', 'base-url': partner.baseUrl, credential: 'service-credential-abc' })
  ).partnerId as string;
});
afterAll(async () => {
  await app?.close();
  await partner?.close();
});
beforeEach(() => {
  partner.script.introspect.length = 0;
  partner.script.account.length = 0;
});

describe('verifyBankDetails', () => {
  describe('with the sandbox partner', () => {
    it('verifies a matching number and name, answers the mask and name score, and records the check', async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      const { data, response } = await verify(await sandboxToken('Jane Doe'), mortgageId, JANE_NUMBER);
      expect(response.status).toBe(200);
      expect(data).toEqual({
        verificationId: expect.stringMatching(/^bvf-[0-9a-z]{26}$/),
        mortgageId,
        verified: true,
        accountMask: '6789',
        nameMatch: { score: 1, outcome: 'match', threshold: 0.85 },
        failedChecks: [],
        checkedAt: now.toISOString(),
        livemode: true,
      });
      const history = await recorded(lender, mortgageId);
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({ verificationId: data!.verificationId, verified: true, accountMask: '6789', partnerId: sandboxPartnerId });
      expect(history[0]!.accountNumberHash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('matches names across accents, word order, punctuation and a middle initial', async () => {
      const mortgageId = await newApplication(lender, 'José A. Müller-Smith');
      const { data } = await verify(await sandboxToken('MULLER SMITH, JOSE'), mortgageId, JANE_NUMBER);
      expect(data).toMatchObject({ verified: true, nameMatch: { outcome: 'match' }, failedChecks: [] });
    });

    it('a wrong account number fails the account_number check without revealing the true number', async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      const { data, response } = await verify(await sandboxToken('Jane Doe'), mortgageId, WRONG_NUMBER);
      expect(response.status).toBe(200);
      expect(data).toMatchObject({ verified: false, failedChecks: ['account_number'], accountMask: '6780', nameMatch: { outcome: 'match' } });
      expect(JSON.stringify(data)).not.toContain(JANE_NUMBER);
      expect(JSON.stringify(data)).not.toContain('6789');
    });

    it("an account held by someone else fails the holder_name check without revealing the holder's name", async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      const { data } = await verify(await sandboxToken('Johnathan Roe'), mortgageId, JANE_NUMBER);
      expect(data).toMatchObject({ verified: false, failedChecks: ['holder_name'], nameMatch: { outcome: 'mismatch', score: 0 } });
      expect(JSON.stringify(data)).not.toMatch(/johnathan|roe/i);
    });

    it('keeps every check as history, in order', async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      const token = await sandboxToken('Jane Doe');
      await verify(token, mortgageId, WRONG_NUMBER);
      advance(1000);
      await verify(token, mortgageId, JANE_NUMBER);
      expect((await recorded(lender, mortgageId)).map((v) => v.verified)).toEqual([false, true]);
    });
  });

  describe('authentication', () => {
    let mortgageId: string;
    beforeAll(async () => {
      mortgageId = await newApplication(lender, 'Jane Doe');
    });

    async function expect401(authorization: string | undefined, detail?: RegExp) {
      const response = await app.fetch('/v1/banks/verify', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify({ mortgageId, applicant: { accountNumber: JANE_NUMBER } }),
      });
      const body = (await response.json()) as { code: string; detail: string };
      expect(response.status, JSON.stringify(body)).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(body.code).toBe('unauthorized');
      if (detail) expect(body.detail).toMatch(detail);
    }

    it('no token → 401', () => expect401(undefined, /bank token/));
    it("an API key of the application's own account → 401", () => expect401(`Bearer ${lender.apiKey}`, /not an API key/));
    it('a token of no known shape → 401', () => expect401('Bearer bnk_tok_not-a-real-token', /not a bank token/));
    it('Basic credentials → 401', () => expect401(`Basic ${Buffer.from('jane:secret').toString('base64')}`));

    it('a well-formed token of an unknown partner → 401', async () => {
      const token = await sandboxToken('Jane Doe');
      await expect401(`Bearer ${token.replace(sandboxPartnerId.slice(4), '01jdz8k3n4q2v6x9b7c5t1r0aa')}`, /not valid/);
    });

    it('a sandbox token with a changed character → 401', async () => {
      const token = await sandboxToken('Jane Doe');
      const i = token.length - 10;
      await expect401(`Bearer ${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`, /not one this partner issued/);
    });

    it("a sandbox partner's token presented as another sandbox partner's → 401", async () => {
      const second = (await admin('bank-partner create', { name: 'Second Sandbox', connector: 'sandbox' })).partnerId as string;
      const token = await sandboxToken('Jane Doe');
      await expect401(`Bearer ${token.replace(sandboxPartnerId.slice(4), second.slice(4))}`, /not one this partner issued/);
    });

    it('an expired sandbox token → 401, a fresh one → 200', async () => {
      const token = await sandboxToken('Jane Doe');
      advance(3600 * 1000);
      await expect401(`Bearer ${token}`, /expired/);
      const { response } = await verify(await sandboxToken('Jane Doe'), mortgageId, JANE_NUMBER);
      expect(response.status).toBe(200);
    });

    it("a disabled partner's tokens → 401 until it is enabled again", async () => {
      const token = await sandboxToken('Jane Doe');
      await admin('bank-partner disable', { partner: sandboxPartnerId });
      try {
        await expect401(`Bearer ${token}`, /not valid/);
      } finally {
        await admin('bank-partner enable', { partner: sandboxPartnerId });
      }
      expect((await verify(token, mortgageId, JANE_NUMBER)).response.status).toBe(200);
    });

    it('a refused token records nothing', async () => {
      const fresh = await newApplication(lender, 'Jane Doe');
      await app.clientFor(lender.apiKey).POST('/v1/banks/verify', { body: { mortgageId: fresh, applicant: { accountNumber: JANE_NUMBER } } });
      expect(await recorded(lender, fresh)).toEqual([]);
    });

    it.each([
      ['GET', '/v1/account'],
      ['GET', '/v1/applications'],
      ['GET', '/v1/mortgages/export'],
    ])('a bank token on %s %s → 401', async (method, url) => {
      const response = await app.fetch(url, { method, headers: { authorization: `Bearer ${await sandboxToken('Jane Doe')}` } });
      expect(response.status).toBe(401);
    });
  });

  describe('scope and input', () => {
    it('an unknown mortgageId → 404', async () => {
      const { error, response } = await verify(await sandboxToken('Jane Doe'), 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', JANE_NUMBER);
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ code: 'not_found' });
    });

    it('a partner serves every account until restricted; a restricted partner gets 404 for accounts it does not serve', async () => {
      const restricted = (await admin('bank-partner create', { name: 'Regional Bank', connector: 'sandbox' })).partnerId as string;
      const token = await sandboxToken('Jane Doe', JANE_NUMBER, restricted);
      const ours = await newApplication(lender, 'Jane Doe');
      const theirs = await newApplication(otherLender, 'Jane Doe');
      expect((await verify(token, theirs, JANE_NUMBER)).response.status).toBe(200);

      await admin('bank-partner allow-account', { partner: restricted, account: lender.accountId });
      expect((await verify(token, ours, JANE_NUMBER)).response.status).toBe(200);
      const refused = await verify(token, theirs, JANE_NUMBER);
      expect(refused.response.status).toBe(404);
      expect(JSON.stringify(refused.error)).not.toContain(otherLender.accountId);

      await admin('bank-partner unrestrict', { partner: restricted });
      expect((await verify(token, theirs, JANE_NUMBER)).response.status).toBe(200);
    });

    it('a withdrawn application → 409 with its status', async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      await lender.client.POST('/v1/applications/{mortgageId}/withdraw', { params: { path: { mortgageId } } });
      const { error, response } = await verify(await sandboxToken('Jane Doe'), mortgageId, JANE_NUMBER);
      expect(response.status).toBe(409);
      expect(error).toMatchObject({ code: 'application_withdrawn', currentStatus: 'withdrawn' });
    });

    it.each([
      ['an account number with spaces', { mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', applicant: { accountNumber: '0001 2345 6789' } }],
      ['a numeric account number', { mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', applicant: { accountNumber: 123456789 } }],
      ['no applicant', { mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa' }],
      ['a malformed mortgageId', { mortgageId: 'qte-01jdz8k3n4q2v6x9b7c5t1r0aa', applicant: { accountNumber: JANE_NUMBER } }],
      ['an extra field', { mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', applicant: { accountNumber: JANE_NUMBER, holder: 'Jane Doe' } }],
    ])('%s → 400', async (_what, body) => {
      const response = await app.fetch('/v1/banks/verify', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${await sandboxToken('Jane Doe')}` },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
    });
  });

  describe('failed-attempt limit', () => {
    it('after 5 failed verifications in an hour answers 429 with Retry-After, even for correct details, until the hour has passed', async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      const token = await sandboxToken('Jane Doe');
      const firstFailureAt = now.getTime();
      for (let i = 0; i < 5; i++) {
        const { data } = await verify(token, mortgageId, WRONG_NUMBER);
        expect(data!.verified).toBe(false);
        advance(60_000);
      }
      const limited = await verify(token, mortgageId, JANE_NUMBER);
      expect(limited.response.status).toBe(429);
      expect(limited.error).toMatchObject({ code: 'verification_attempts_exceeded' });
      const retryAfter = Number(limited.response.headers.get('retry-after'));
      expect(retryAfter).toBe(Math.ceil((firstFailureAt + 3600_000 - now.getTime()) / 1000));
      expect(await recorded(lender, mortgageId)).toHaveLength(5);

      // Another application is not limited by this one's failures.
      const other = await newApplication(lender, 'Jane Doe');
      // Nor is another linked account on this application.
      const stranger = await sandboxToken('John Roe', '000999888777');
      expect((await verify(stranger, mortgageId, '000999888777')).response.status).toBe(200);
      expect((await verify(token, other, JANE_NUMBER)).response.status).toBe(200);

      advance(retryAfter * 1000);
      const fresh = await sandboxToken('Jane Doe');
      const { data, response } = await verify(fresh, mortgageId, JANE_NUMBER);
      expect(response.status).toBe(200);
      expect(data!.verified).toBe(true);
    });

    it("a stranger's failures with their own linked account do not lock the applicant out", async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      const strangerToken = await sandboxToken('Mallory Stranger', '000555444333');
      for (let i = 0; i < 6; i++) await verify(strangerToken, mortgageId, '000555444333');
      expect((await verify(strangerToken, mortgageId, '000555444333')).response.status).toBe(429);
      const { data, response } = await verify(await sandboxToken('Jane Doe'), mortgageId, JANE_NUMBER);
      expect(response.status).toBe(200);
      expect(data!.verified).toBe(true);
    });

    it('concurrent failed attempts cannot pass the limit together', async () => {
      const mortgageId = await newApplication(lender, 'Jane Doe');
      const token = await sandboxToken('Jane Doe');
      for (let i = 0; i < 3; i++) await verify(token, mortgageId, WRONG_NUMBER);
      const results = await Promise.all(Array.from({ length: 6 }, () => verify(token, mortgageId, WRONG_NUMBER)));
      expect(results.map((r) => r.response.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
      expect(await recorded(lender, mortgageId)).toHaveLength(5);
    });
  });

  describe('with an http partner', () => {
    let mortgageId: string;
    let token: string;
    beforeAll(async () => {
      mortgageId = await newApplication(lender, 'Ana María Smith-Jones');
      partner.tokens.set('fhb-access-token-0001', { accountRef: 'acct_ana', holderName: 'Ana Maria Smith Jones', accountNumber: HTTP_NUMBER });
      token = formatBankToken(httpPartnerId, 'fhb-access-token-0001');
    });

    it("verifies against the partner's API: token introspection, then account lookup", async () => {
      const before = partner.received.length;
      const { data, response } = await verify(token, mortgageId, HTTP_NUMBER);
      expect(response.status).toBe(200);
      expect(data).toMatchObject({ verified: true, accountMask: '1012', failedChecks: [] });
      expect(partner.received.slice(before).map((r) => [r.route, r.authorization])).toEqual([
        ['introspect', 'Bearer service-credential-abc'],
        ['account', 'Bearer service-credential-abc'],
      ]);
    });

    it('a wrong number is a failed verification', async () => {
      const { data } = await verify(token, await newApplication(lender, 'Ana María Smith-Jones'), WRONG_NUMBER);
      expect(data).toMatchObject({ verified: false, failedChecks: ['account_number'] });
    });

    it('a token the partner says is not active → 401', async () => {
      const { response } = await verify(formatBankToken(httpPartnerId, 'fhb-access-token-revoked'), mortgageId, HTTP_NUMBER);
      expect(response.status).toBe(401);
    });

    it('answers after a 5xx that a retry cures', async () => {
      partner.script.account.push({ status: 503, body: 'busy', contentType: 'text/plain' });
      const { data, response } = await verify(token, mortgageId, HTTP_NUMBER);
      expect(response.status).toBe(200);
      expect(data!.verified).toBe(true);
    });

    it('a partner that keeps failing → 502 bank_partner_unavailable with Retry-After, nothing recorded', async () => {
      const fresh = await newApplication(lender, 'Ana María Smith-Jones');
      partner.script.account.push({ status: 500 }, { status: 502 }, { status: 503 });
      const { error, response } = await verify(token, fresh, HTTP_NUMBER);
      expect(response.status).toBe(502);
      expect(error).toMatchObject({ code: 'bank_partner_unavailable' });
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await recorded(lender, fresh)).toEqual([]);
    });

    it('a partner that times out during introspection → 502 bank_partner_unavailable', async () => {
      partner.script.introspect.push({ delayMs: 1000, body: { active: false } });
      const { error, response } = await verify(token, mortgageId, HTTP_NUMBER);
      expect(response.status).toBe(502);
      expect(error).toMatchObject({ code: 'bank_partner_unavailable' });
    });

    it("a partner whose stored credential no longer opens (the server secret changed) → 502, not 500", async () => {
      const broken = (await admin('bank-partner create', { name: 'Rekeyed Bank', connector: 'http', 'base-url': partner.baseUrl, credential: 'old-credential' })).partnerId as string;
      // What a changed BANK_SECRET leaves behind: a sealed credential this server cannot open.
      await app.ctx.store.transaction(async (tx) => {
        const record = (await findBankPartner(tx, broken))!;
        await updateBankPartner(tx, { ...record, credentialSealed: sealCredential(randomBytes(32), broken, 'old-credential') });
      });
      const { error, response } = await verify(formatBankToken(broken, 'fhb-access-token-0001'), mortgageId, HTTP_NUMBER);
      expect(response.status).toBe(502);
      expect(error).toMatchObject({ code: 'bank_partner_unavailable' });
    });

    it('a malformed partner answer → 502 bank_partner_invalid_response, without the partner\'s details', async () => {
      partner.script.account.push({ body: { accountRef: 'acct_ana', holderName: 'Ana', accountNumber: HTTP_NUMBER, internalNote: 'vip' } });
      const { error, response } = await verify(token, mortgageId, HTTP_NUMBER);
      expect(response.status).toBe(502);
      expect(error).toMatchObject({ code: 'bank_partner_invalid_response' });
      expect(JSON.stringify(error)).not.toMatch(/internalNote|127\.0\.0\.1/);
    });
  });

  describe('never keeps a full account number', () => {
    async function dataDirBytes(): Promise<Buffer> {
      // On PostgreSQL the "database files" are the database's rows, every table's, as text.
      if (app.engine === 'postgres') return postgresContents(app.ctx.store);
      const names = await readdir(app.dataDir, { recursive: true, withFileTypes: true });
      const files = names.filter((d) => d.isFile()).map((d) => path.join(d.parentPath, d.name));
      return Buffer.concat(await Promise.all(files.map((f) => readFile(f))));
    }

    it('no full account number in the log, the database files (journal and snapshot) or the export', async () => {
      // Self-contained (the tests above add more): a failure then a match, with each connector.
      const mortgageId = await newApplication(lender, 'Jane Doe');
      expect((await verify(await sandboxToken('Jane Doe'), mortgageId, WRONG_NUMBER)).data!.verified).toBe(false);
      expect((await verify(await sandboxToken('Jane Doe'), mortgageId, JANE_NUMBER)).data!.verified).toBe(true);
      partner.tokens.set('fhb-access-token-scan', { accountRef: 'acct_scan', holderName: 'Jane Doe', accountNumber: HTTP_NUMBER });
      const httpToken = formatBankToken(httpPartnerId, 'fhb-access-token-scan');
      const viaHttp = await newApplication(lender, 'Jane Doe');
      expect((await verify(httpToken, viaHttp, WRONG_NUMBER)).data!.verified).toBe(false);
      expect((await verify(httpToken, viaHttp, HTTP_NUMBER)).data!.verified).toBe(true);

      const journal = await dataDirBytes();
      await app.ctx.store.checkpoint();
      const snapshot = await dataDirBytes();
      const exports = await Promise.all(
        ['json', 'csv'].map(async (format) => (await app.fetch(`/v1/mortgages/export?format=${format}`, { headers: { authorization: `Bearer ${lender.apiKey}` } })).text()),
      );
      const log = logLines.join('');
    const credential = 'service-credential-abc';
    expect(log).not.toContain(credential);
    expect(snapshot.includes(credential) || journal.includes(credential), 'a partner credential in the database files').toBe(false);

      // The scans can see what they look for: the verifications are there, by mask and id.
      expect(log).toContain('bank verification recorded');
      expect(snapshot.includes('bank_verifications')).toBe(true);
      for (const text of exports) expect(text).toMatch(/6789[\s\S]*1012|1012[\s\S]*6789/);
      for (const number of FULL_NUMBERS) {
        expect(log, `log contains ${number}`).not.toContain(number);
        expect(journal.includes(number), `journal contains ${number}`).toBe(false);
        expect(snapshot.includes(number), `snapshot contains ${number}`).toBe(false);
        for (const text of exports) expect(text).not.toContain(number);
      }
    });
  });
});

describe('bank-partner admin commands', () => {
  const refusal = (command: string, flags: Record<string, string>) => admin(command, flags).then(() => 'accepted', (err: Error) => err.message);

  it('refuse an http partner whose base URL is not https to a public address (loopback is allow-listed in this app)', async () => {
    expect(await refusal('bank-partner create', { name: 'Plain', connector: 'http', 'base-url': 'http://api.firstharbor.com/' })).toMatch(/must use https/);
    expect(await refusal('bank-partner create', { name: 'Private', connector: 'http', 'base-url': 'https://10.0.0.5/bank/' })).toMatch(/not a public address/);
    expect(await refusal('bank-partner create', { name: 'Metadata', connector: 'http', 'base-url': 'https://169.254.169.254/' })).toMatch(/not a public address/);
    expect(await refusal('bank-partner create', { name: 'No URL', connector: 'http' })).toMatch(/needs --base-url/);
    expect(await refusal('bank-partner create', { name: 'Sandbox', connector: 'sandbox', 'base-url': 'https://api.firstharbor.com/' })).toMatch(/takes no base URL/);
    expect(await refusal('bank-partner create', { name: 'Odd', connector: 'ftp' })).toMatch(/sandbox or http/);
  });

  it('list shows each partner, its token prefix and whom it serves, never its credential', async () => {
    const { partners } = (await admin('bank-partner list', {})) as { partners: Record<string, unknown>[] };
    const http = partners.find((p) => p.partnerId === httpPartnerId)!;
    expect(http).toMatchObject({ connector: 'http', baseUrl: partner.baseUrl, hasCredential: true, serves: 'all', tokenPrefix: `bnk_tok_${httpPartnerId.slice(4)}_` });
    expect(JSON.stringify(partners)).not.toContain('service-credential-abc');
  });

  it('mint sandbox tokens only at sandbox partners, for a holder and a well-formed number', async () => {
    expect(await refusal('bank-partner sandbox-token', { partner: httpPartnerId, holder: 'Jane Doe', 'account-number': JANE_NUMBER })).toMatch(/tokens come from the partner/);
    expect(await refusal('bank-partner sandbox-token', { partner: sandboxPartnerId, holder: 'Jane Doe', 'account-number': '0001 2345' })).toMatch(/4 to 34/);
    expect(await refusal('bank-partner sandbox-token', { partner: 'bnk-01jdz8k3n4q2v6x9b7c5t1r0aa', holder: 'Jane Doe', 'account-number': JANE_NUMBER })).toMatch(/No bank partner/);
    const minted = await admin('bank-partner sandbox-token', { partner: sandboxPartnerId, holder: 'Jane Doe', 'account-number': JANE_NUMBER });
    expect(minted).toEqual({ token: expect.stringMatching(new RegExp(`^bnk_tok_${sandboxPartnerId.slice(4)}_`)), expiresAt: new Date(Math.floor(now.getTime() / 1000) * 1000 + 3600_000).toISOString() });
  });

  it('allow-account refuses an unknown account, and a partner restricted to one account lists it', async () => {
    const regional = (await admin('bank-partner create', { name: 'Listed Bank', connector: 'sandbox' })).partnerId as string;
    expect(await refusal('bank-partner allow-account', { partner: regional, account: 'acc-01jdz8k3n4q2v6x9b7c5t1r0aa' })).toMatch(/No account/);
    expect(await admin('bank-partner allow-account', { partner: regional, account: lender.accountId })).toMatchObject({ serves: [lender.accountId] });
    expect(await admin('bank-partner disallow-account', { partner: regional, account: lender.accountId })).toMatchObject({ serves: [] });
  });
});
