/**
 * A bank token is bound to the lender accounts its partner served at issue: at minting for the
 * sandbox banks' tokens, at its first accepted use for an http partner's. Later changes to the
 * partner's accounts never widen a token (an account allowed later, or opened later, is 404 for it,
 * as an unknown application is), while a narrowing applies at once. Only the token's SHA-256 is kept.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBankToken } from '../../../src/banks/tokenFormat.ts';
import { runAdminCommand } from '../../../src/cli/commands.ts';
import type { Clock } from '../../../src/clock.ts';
import { startFakePartner, type FakePartner } from '../../helpers/fakeBankPartner.ts';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';

const NUMBER = '000123456789';
let now = new Date('2026-11-21T18:00:00.000Z');
const clock: Clock = { now: () => now };
const later = () => (now = new Date(now.getTime() + 1_000));

let app: TestApp;
let partner: FakePartner;
let harbor: TestAccount;
let bay: TestAccount;

const admin = (command: string, flags: Record<string, string>) => runAdminCommand(app.ctx, command, flags);

async function sandboxToken(partnerId: string): Promise<string> {
  later();
  return (await admin('bank-partner sandbox-token', { partner: partnerId, holder: 'Jane Doe', 'account-number': NUMBER })).token as string;
}

async function application(account: TestAccount): Promise<string> {
  const { data, response } = await account.client.POST('/v1/applications', { body: { applicant: { name: 'Jane Doe', amount: 350000 }, term: 30 } });
  expect(response.status).toBe(201);
  return data!.mortgageId;
}

async function verifyStatus(token: string, mortgageId: string): Promise<number> {
  later();
  const { response } = await app.clientFor(token).POST('/v1/banks/verify', { body: { mortgageId, applicant: { accountNumber: NUMBER } } });
  return response.status;
}

beforeAll(async () => {
  partner = await startFakePartner('binding-credential');
  app = await startTestApp({ clock, env: { BANK_PARTNER_ALLOWED_HOSTS: '127.0.0.1', BANK_PARTNER_TIMEOUT_MS: '1000' } });
  harbor = await app.newAccount('Harbor Lending');
  bay = await app.newAccount('Bay Lending');
});
afterAll(async () => {
  await app?.close();
  await partner?.close();
});

describe('a sandbox token, bound when it is minted', () => {
  it("an account the restricted partner is allowed after the token was minted is not the token's (404); a token minted after reaches it", async () => {
    const partnerId = (await admin('bank-partner create', { name: 'Regional Bank', connector: 'sandbox' })).partnerId as string;
    await admin('bank-partner allow-account', { partner: partnerId, account: harbor.accountId });
    const early = await sandboxToken(partnerId);
    const ours = await application(harbor);
    const theirs = await application(bay);
    expect(await verifyStatus(early, ours)).toBe(200);
    expect(await verifyStatus(early, theirs)).toBe(404);

    await admin('bank-partner allow-account', { partner: partnerId, account: bay.accountId });
    expect(await verifyStatus(early, theirs)).toBe(404);
    expect(await verifyStatus(await sandboxToken(partnerId), theirs)).toBe(200);

    // Unrestricting the partner later does not widen the early token either.
    await admin('bank-partner unrestrict', { partner: partnerId });
    expect(await verifyStatus(early, theirs)).toBe(404);
    expect(await verifyStatus(early, ours)).toBe(200);
  });

  it('a partner serving every account: an account opened after the token was minted is not its own; a narrowing applies at once', async () => {
    const partnerId = (await admin('bank-partner create', { name: 'National Bank', connector: 'sandbox' })).partnerId as string;
    const token = await sandboxToken(partnerId);
    later();
    const newcomer = await app.newAccount('Newcomer Lending');
    const ofNewcomer = await application(newcomer);
    const ofHarbor = await application(harbor);
    const ofBay = await application(bay);
    expect(await verifyStatus(token, ofHarbor)).toBe(200);
    expect(await verifyStatus(token, ofBay)).toBe(200);
    expect(await verifyStatus(token, ofNewcomer)).toBe(404);
    expect(await verifyStatus(await sandboxToken(partnerId), ofNewcomer)).toBe(200);

    await admin('bank-partner allow-account', { partner: partnerId, account: harbor.accountId });
    expect(await verifyStatus(token, ofBay)).toBe(404);
    expect(await verifyStatus(token, ofHarbor)).toBe(200);
  });
});

describe("an http partner's token, bound at its first accepted use", () => {
  it('keeps the accounts its partner served then', async () => {
    const partnerId = (
      await admin('bank-partner create', { name: 'First Harbor Bank', connector: 'http', 'base-url': partner.baseUrl, credential: 'binding-credential' })
    ).partnerId as string;
    await admin('bank-partner allow-account', { partner: partnerId, account: harbor.accountId });
    partner.tokens.set('fhb-binding-0001', { accountRef: 'acct_jane', holderName: 'Jane Doe', accountNumber: NUMBER });
    partner.tokens.set('fhb-binding-0002', { accountRef: 'acct_jane', holderName: 'Jane Doe', accountNumber: NUMBER });
    const first = formatBankToken(partnerId, 'fhb-binding-0001');
    const second = formatBankToken(partnerId, 'fhb-binding-0002');
    const ofHarbor = await application(harbor);
    const ofBay = await application(bay);
    expect(await verifyStatus(first, ofHarbor)).toBe(200);

    await admin('bank-partner allow-account', { partner: partnerId, account: bay.accountId });
    expect(await verifyStatus(first, ofBay)).toBe(404);
    // A token the service first sees now is bound to what the partner serves now.
    expect(await verifyStatus(second, ofBay)).toBe(200);

    const stored = await app.ctx.store.read((db) => db.all<{ token_hash: string }>('SELECT token_hash FROM bank_tokens'));
    const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
    expect(stored.map((row) => row.token_hash)).toEqual(expect.arrayContaining([hashOf(first), hashOf(second)]));
    expect(JSON.stringify(stored)).not.toContain('fhb-binding');
  });
});
