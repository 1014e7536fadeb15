/**
 * The limits of POST /v1/banks/verify, tried as an attacker would: no request without a valid
 * token can use up a valid token's allowance, a flood of bad tokens gets 429 for its sender while
 * genuine tokens keep getting answers, and junk never makes the service hammer an `http` partner.
 *
 * The same app listens on 127.0.0.1 and ::1: two client addresses (the stranger and the lender).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatBankToken } from '../../../src/banks/tokenFormat.ts';
import { runAdminCommand } from '../../../src/cli/commands.ts';
import { startFakePartner, type FakePartner, type ScriptedReply } from '../../helpers/fakeBankPartner.ts';
import { manualClock } from '../../helpers/webhookReceiver.ts';
import { apiClient, startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';

const PARTNER_QUOTA = 5; // RATE_LIMIT_PER_MINUTE
const CLIENT_FAILURES = 3; // BANK_AUTH_FAILURES_PER_CLIENT_PER_MINUTE
const PARTNER_REFUSALS = 4; // BANK_AUTH_FAILURES_PER_PARTNER_PER_MINUTE
const NUMBER = '000123456789';

const clock = manualClock(Date.parse('2026-11-21T18:00:00.000Z'));
let app: TestApp;
let ipv6BaseUrl: string;
let lender: TestAccount;
let fake: FakePartner;
let sandboxPartnerId: string;
let httpPartnerId: string;

beforeAll(async () => {
  fake = await startFakePartner();
  fake.tokens.set('genuine-http-token-0001', { accountRef: 'acct_1', holderName: 'Jane Doe', accountNumber: NUMBER });
  app = await startTestApp({
    clock,
    env: {
      RATE_LIMIT_PER_MINUTE: String(PARTNER_QUOTA),
      BANK_AUTH_FAILURES_PER_CLIENT_PER_MINUTE: String(CLIENT_FAILURES),
      BANK_AUTH_FAILURES_PER_PARTNER_PER_MINUTE: String(PARTNER_REFUSALS),
      BANK_PARTNER_ALLOWED_HOSTS: '127.0.0.1',
      BANK_PARTNER_RETRY_BASE_MS: '10',
      // A partner that has not answered by then has timed out (the outage test provokes one).
      BANK_PARTNER_TIMEOUT_MS: '1000',
    },
  });
  ipv6BaseUrl = await app.baseUrlOnIpv6Loopback();
  lender = await app.newAccount('Harbor Lending');
  sandboxPartnerId = (await runAdminCommand(app.ctx, 'bank-partner create', { name: 'Sandbox Bank', connector: 'sandbox' })).partnerId as string;
  httpPartnerId = (await runAdminCommand(app.ctx, 'bank-partner create', { name: 'First Harbor Bank', connector: 'http', 'base-url': fake.baseUrl }))
    .partnerId as string;
});
afterAll(async () => {
  await app?.close();
  await fake?.close();
});
// Every test starts in a fresh minute: no window of an earlier test is still open.
beforeEach(() => clock.advance(60_000));

async function newApplication(): Promise<string> {
  const { data, response } = await lender.client.POST('/v1/applications', { body: { applicant: { name: 'Jane Doe', amount: 350000 }, term: 30 } });
  expect(response.status).toBe(201);
  return data!.mortgageId;
}

async function sandboxToken(): Promise<string> {
  return (await runAdminCommand(app.ctx, 'bank-partner sandbox-token', { partner: sandboxPartnerId, holder: 'Jane Doe', 'account-number': NUMBER })).token as string;
}

/** One verification from the stranger (127.0.0.1) or the lender (::1), with the body the attacker used: `{}`. */
async function verify(from: 'stranger' | 'lender', token: string, body: Record<string, unknown> = {}) {
  const client = apiClient(from === 'stranger' ? app.baseUrl : ipv6BaseUrl, token);
  const { response, data, error } = await client.POST('/v1/banks/verify', { body: body as never });
  return { status: response.status, headers: response.headers, data, error: error as { code?: string; detail?: string } | undefined };
}

const introspections = () => fake.received.filter((r) => r.route === 'introspect').length;

describe('verifyBankDetails', () => {
  it("a stranger's flood of made-up tokens with a partner's prefix gets 429 for the stranger; the partner's genuine token keeps its whole allowance", async () => {
    const junk = formatBankToken(sandboxPartnerId, 'made-up-token-000000000000');
    const flood = [];
    for (let i = 0; i < 3 * PARTNER_QUOTA; i++) flood.push(await verify('stranger', junk));
    expect(flood.map((r) => r.status)).toEqual([...Array(CLIENT_FAILURES).fill(401), ...Array(3 * PARTNER_QUOTA - CLIENT_FAILURES).fill(429)]);
    const limited = flood.at(-1)!;
    expect(limited.error).toMatchObject({ code: 'bank_token_failures_exceeded' });
    expect(limited.error!.detail).toContain(`${CLIENT_FAILURES} times`);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    // The flood spent nothing of the partner's quota: the lender's genuine token gets every one of its answers.
    const mortgageId = await newApplication();
    const token = await sandboxToken();
    for (let i = 0; i < PARTNER_QUOTA; i++) {
      const answer = await verify('lender', token, { mortgageId, applicant: { accountNumber: NUMBER } });
      expect(answer.status, JSON.stringify(answer.error)).toBe(200);
      expect(answer.data).toMatchObject({ verified: true });
    }
    // The quota still holds for proven tokens.
    const over = await verify('lender', token, { mortgageId, applicant: { accountNumber: NUMBER } });
    expect(over.status).toBe(429);
    expect(over.error).toMatchObject({ code: 'rate_limited' });
    expect(over.error!.detail).toContain(`This bank partner's tokens have used ${PARTNER_QUOTA} requests this minute`);

    // A new minute: the stranger's address may try again (and fails as before).
    clock.advance(60_000);
    expect((await verify('stranger', junk)).status).toBe(401);
  });

  it('a burst of concurrent junk from one address reaches the partner at most the per-client number of times', async () => {
    const before = introspections();
    const junk = formatBankToken(httpPartnerId, 'made-up-http-token-0000');
    const burst = await Promise.all(Array.from({ length: 20 }, () => verify('stranger', junk)));
    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(CLIENT_FAILURES);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - CLIENT_FAILURES);
    expect(introspections() - before).toBe(CLIENT_FAILURES);
  });

  it("caps an http partner's refusals over all clients: junk from many addresses stops reaching the partner, other partners are unaffected", async () => {
    const before = introspections();
    const junk = formatBankToken(httpPartnerId, 'made-up-http-token-0001');
    for (let i = 0; i < CLIENT_FAILURES; i++) expect((await verify('stranger', junk)).status).toBe(401);
    for (let i = 0; i < PARTNER_REFUSALS - CLIENT_FAILURES; i++) expect((await verify('lender', junk)).status).toBe(401);
    expect(introspections() - before).toBe(PARTNER_REFUSALS);

    const capped = await verify('lender', junk);
    expect(capped.status).toBe(429);
    expect(capped.error).toMatchObject({ code: 'bank_partner_refusals_exceeded' });
    expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(capped.error!.detail).toBe(
      `This bank partner has refused ${PARTNER_REFUSALS} tokens in the last minute; new tokens are not sent to it for checking until ` +
        `the minute ends. Retry after ${capped.headers.get('retry-after')} seconds.`,
    );
    expect(introspections() - before).toBe(PARTNER_REFUSALS); // not asked again
    // A cap is no failure of the lender's address: its genuine sandbox token is answered.
    const mortgageId = await newApplication();
    expect((await verify('lender', await sandboxToken(), { mortgageId, applicant: { accountNumber: NUMBER } })).status).toBe(200);

    // Once the minute is over, the http partner's genuine token is checked with the partner and verifies.
    clock.advance(60_000);
    const genuine = await verify('lender', formatBankToken(httpPartnerId, 'genuine-http-token-0001'), { mortgageId, applicant: { accountNumber: NUMBER } });
    expect(genuine.status, JSON.stringify(genuine.error)).toBe(200);
    expect(genuine.data).toMatchObject({ verified: true });
  });

  it("more partner outages from one address than its failure limit (5xx on every try, a gateway timeout, no answer in time) do not lock the address out", async () => {
    const mortgageId = await newApplication();
    const genuine = formatBankToken(httpPartnerId, 'genuine-http-token-0001');
    const body = { mortgageId, applicant: { accountNumber: NUMBER } };
    // What the partner answers to the introspection of each request (every try of it: 5xx is tried again).
    const outages: ScriptedReply[][] = [
      [{ status: 502 }, { status: 502 }, { status: 502 }],
      [{ status: 504 }, { status: 504 }, { status: 504 }],
      [{ status: 503 }, { status: 502 }, { status: 504 }],
      [{ delayMs: 3_000, body: { active: false } }], // past BANK_PARTNER_TIMEOUT_MS: a timeout, not tried again
    ];
    expect(outages.length).toBeGreaterThan(CLIENT_FAILURES);
    for (const replies of outages) {
      fake.script.introspect.push(...replies);
      const answer = await verify('stranger', genuine, body);
      expect(answer.status, JSON.stringify(answer.error)).toBe(502);
      expect(answer.error).toMatchObject({ code: 'bank_partner_unavailable' });
    }
    expect(fake.script.introspect).toEqual([]);
    // The partner is back: the address's genuine token is verified...
    const verified = await verify('stranger', genuine, body);
    expect(verified.status, JSON.stringify(verified.error)).toBe(200);
    expect(verified.data).toMatchObject({ verified: true });
    // ...and the address still has its whole allowance of real token failures.
    const junk = formatBankToken(sandboxPartnerId, 'made-up-token-after-outages');
    const tries = [];
    for (let i = 0; i <= CLIENT_FAILURES; i++) tries.push(await verify('stranger', junk));
    expect(tries.map((r) => r.status)).toEqual([...Array(CLIENT_FAILURES).fill(401), 429]);
    expect(tries.at(-1)!.error).toMatchObject({ code: 'bank_token_failures_exceeded' });
  });

  it("a partner's accepted tokens do not count as refusals", async () => {
    const mortgageId = await newApplication();
    const genuine = formatBankToken(httpPartnerId, 'genuine-http-token-0001');
    for (let i = 0; i < PARTNER_QUOTA; i++) {
      expect((await verify('stranger', genuine, { mortgageId, applicant: { accountNumber: NUMBER } })).status).toBe(200);
    }
  });
});
