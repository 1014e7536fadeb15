/**
 * POST /v1/banks/verify is limited per bank partner before the token is checked with the partner,
 * so junk tokens cannot make the service call a partner's API without bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBankToken } from '../../src/banks/tokenFormat.ts';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let partnerId: string;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  partnerId = (await runAdminCommand(app.ctx, 'bank-partner create', { name: 'Sandbox Bank', connector: 'sandbox' })).partnerId as string;
});
afterAll(() => app?.close());

describe('verifyBankDetails', () => {
  it("answers 429 rate_limited once a partner's tokens have used the minute, before checking the token", async () => {
    const junk = formatBankToken(partnerId, 'not-a-real-token-000000');
    const body = JSON.stringify({ mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', applicant: { accountNumber: '000123456789' } });
    const send = () =>
      app.fetch('/v1/banks/verify', { method: 'POST', headers: { Authorization: `Bearer ${junk}`, 'Content-Type': 'application/json' }, body });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send()).status);
    expect(statuses).toEqual([401, 401, 401]);
    const limited = await send();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.json()).toMatchObject({ code: 'rate_limited' });
  });
});
