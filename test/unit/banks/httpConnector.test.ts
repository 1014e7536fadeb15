import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BankPartnerBadResponse, BankPartnerUnavailable, BankTokenRejected } from '../../../src/banks/connector.ts';
import { HttpConnector, MAX_PARTNER_RESPONSE_BYTES } from '../../../src/banks/httpConnector.ts';
import { systemClock } from '../../../src/clock.ts';
import { startFakePartner, type FakePartner } from '../../helpers/fakeBankPartner.ts';

const log = pino({ level: 'silent' });
// A timeout a loaded CI machine's loopback never reaches by accident (300 ms did, under load); the slow partner below is well past it.
const config = { partnerAllowedHosts: ['127.0.0.1'], partnerTimeoutMs: 1500, partnerMaxAttempts: 3, partnerRetryBaseMs: 10 };
const jane = { accountRef: 'acct_jane', holderName: 'Jane Doe', accountNumber: '000123456789' };
const TOKEN = 'partner-token-jane-0001';

let partner: FakePartner;
let connector: HttpConnector;

beforeAll(async () => {
  partner = await startFakePartner('service-credential');
  partner.tokens.set(TOKEN, jane);
  connector = new HttpConnector({ partnerId: 'bnk-01jdz8k3n4q2v6x9b7c5t1r0aa', baseUrl: partner.baseUrl, credential: 'service-credential' }, config, systemClock, log);
});
afterAll(() => partner.close());
beforeEach(() => {
  partner.script.introspect.length = 0;
  partner.script.account.length = 0;
  partner.received.length = 0;
});

describe('HttpConnector against a partner that keeps its contract', () => {
  it('introspects the token and looks up the account, presenting the credential', async () => {
    const grant = await connector.authenticate(TOKEN);
    expect(grant).toEqual({ accountRef: 'acct_jane', expiresAt: null });
    expect(await connector.fetchAccount(grant)).toEqual({ holderName: 'Jane Doe', accountNumber: '000123456789' });
    expect(partner.received.map((r) => r.route)).toEqual(['introspect', 'account']);
    expect(partner.received.every((r) => r.authorization === 'Bearer service-credential')).toBe(true);
    expect(partner.received[0]!.body).toEqual({ token: TOKEN });
  });

  it('an inactive token is rejected', async () => {
    await expect(connector.authenticate('partner-token-unknown-01')).rejects.toThrow(BankTokenRejected);
  });

  it('a token the partner says expired in the past is rejected', async () => {
    partner.script.introspect.push({ body: { active: true, accountRef: 'acct_jane', expiresAt: '2000-01-01T00:00:00.000Z' } });
    await expect(connector.authenticate(TOKEN)).rejects.toThrow('expired');
  });

  it('an account the partner no longer has (404) is rejected as a token', async () => {
    await expect(connector.fetchAccount({ accountRef: 'acct_gone', expiresAt: null })).rejects.toThrow(BankTokenRejected);
  });
});

describe('HttpConnector retries and timeouts', () => {
  it('tries again after 5xx answers and succeeds', async () => {
    partner.script.introspect.push({ status: 503, body: 'busy', contentType: 'text/plain' }, { status: 500, body: {} });
    expect(await connector.authenticate(TOKEN)).toEqual({ accountRef: 'acct_jane', expiresAt: null });
    expect(partner.received.filter((r) => r.route === 'introspect')).toHaveLength(3);
  });

  it('gives up as unavailable after BANK_PARTNER_MAX_ATTEMPTS 5xx answers', async () => {
    partner.script.account.push({ status: 502 }, { status: 502 }, { status: 502 }, { status: 502 });
    await expect(connector.fetchAccount({ accountRef: 'acct_jane', expiresAt: null })).rejects.toThrow(BankPartnerUnavailable);
    expect(partner.received).toHaveLength(3);
  });

  it('a partner slower than the timeout is unavailable, without another try', async () => {
    partner.script.introspect.push({ delayMs: 4000, body: { active: false } });
    await expect(connector.authenticate(TOKEN)).rejects.toThrow(/did not answer within 1500 ms/);
    expect(partner.received).toHaveLength(1);
  });

  it('a partner that refuses connections is unavailable', async () => {
    const closed = await startFakePartner();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const gone = new HttpConnector({ partnerId: 'bnk-01jdz8k3n4q2v6x9b7c5t1r0aa', baseUrl, credential: null }, config, systemClock, log);
    await expect(gone.authenticate(TOKEN)).rejects.toThrow(BankPartnerUnavailable);
  });
});

describe('HttpConnector treats answers as untrusted input', () => {
  const malformedIntrospections: [string, { status?: number; body?: unknown; contentType?: string }][] = [
    ['not JSON', { body: '{"active": tru' }],
    ['JSON with another content type', { body: '{"active":false}', contentType: 'text/html' }],
    ['active as a string', { body: { active: 'true', accountRef: 'acct_jane' } }],
    ['active without an account', { body: { active: true } }],
    ['an extra field', { body: { active: true, accountRef: 'acct_jane', scope: 'all' } }],
    ['an account reference with a slash', { body: { active: true, accountRef: '../admin' } }],
    ['a date that is not a date', { body: { active: true, accountRef: 'acct_jane', expiresAt: 'tomorrow' } }],
    ['an array', { body: [] }],
    ['a redirect', { status: 302, body: {} }],
    ['a 401 (the service credential refused)', { status: 401, body: { error: 'bad credential' } }],
    ['an oversized body', { body: { active: false, pad: 'x'.repeat(MAX_PARTNER_RESPONSE_BYTES) } }],
  ];
  it.each(malformedIntrospections)('an introspection answer of %s is a bad response', async (_what, reply) => {
    partner.script.introspect.push(reply);
    await expect(connector.authenticate(TOKEN)).rejects.toThrow(BankPartnerBadResponse);
  });

  const malformedAccounts: [string, unknown][] = [
    ['a missing number', { accountRef: 'acct_jane', holderName: 'Jane Doe' }],
    ['a number with spaces', { accountRef: 'acct_jane', holderName: 'Jane Doe', accountNumber: '0001 2345 6789' }],
    ['a numeric number', { accountRef: 'acct_jane', holderName: 'Jane Doe', accountNumber: 123456789 }],
    ['an empty holder', { accountRef: 'acct_jane', holderName: '', accountNumber: '000123456789' }],
    ['a holder with control characters', { accountRef: 'acct_jane', holderName: 'Jane\u0000Doe', accountNumber: '000123456789' }],
    ['an over-long holder', { accountRef: 'acct_jane', holderName: 'J'.repeat(201), accountNumber: '000123456789' }],
    ['another account', { accountRef: 'acct_john', holderName: 'John Roe', accountNumber: '000999999999' }],
    ['an extra field', { ...jane, balance: 1000 }],
  ];
  it.each(malformedAccounts)('an account answer with %s is a bad response', async (_what, body) => {
    partner.script.account.push({ body });
    await expect(connector.fetchAccount({ accountRef: 'acct_jane', expiresAt: null })).rejects.toThrow(BankPartnerBadResponse);
  });

  it('never puts the account number it received into an error message', async () => {
    partner.script.account.push({ body: { accountRef: 'acct_jane', holderName: 'Jane\u0000Doe', accountNumber: '000123456789' } });
    const err: unknown = await connector.fetchAccount({ accountRef: 'acct_jane', expiresAt: null }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BankPartnerBadResponse);
    expect((err as Error).message).not.toContain('000123456789');
  });
});

describe('HttpConnector address policy', () => {
  it('does not connect to a loopback partner that is not allow-listed', async () => {
    const strict = new HttpConnector(
      { partnerId: 'bnk-01jdz8k3n4q2v6x9b7c5t1r0aa', baseUrl: partner.baseUrl, credential: null },
      { ...config, partnerAllowedHosts: [] },
      systemClock,
      log,
    );
    await expect(strict.authenticate(TOKEN)).rejects.toThrow(/not allowed/);
    expect(partner.received).toHaveLength(0);
  });
});
