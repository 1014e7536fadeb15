/**
 * State transitions racing each other. On PostgreSQL the requests' transactions really run at once
 * (a pool of connections, READ COMMITTED), so each transition must be a conditional update or take
 * a row lock to give exactly one winner; on sql.js they take turns. Either way: one 200, the
 * others refused, and the record ends as the winner left it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

/** Passes every default rule: submitting it approves it. */
const APPROVABLE = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
};
/** Debt-to-income between the approval and referral limits: submitting it refers it. */
const REFERRABLE = { ...APPROVABLE, applicant: { ...APPROVABLE.applicant, annualIncome: 72000 } };

async function draft(owner: TestAccount, body: typeof APPROVABLE): Promise<string> {
  const { data, response } = await owner.client.POST('/v1/applications', { body });
  expect(response.status).toBe(201);
  return data!.mortgageId;
}

/** The application.approved events published for `mortgageId`. */
async function approvals(owner: TestAccount, mortgageId: string): Promise<number> {
  const { data } = await owner.client.GET('/v1/events', { params: { query: { limit: 100 } } });
  return data!.data.filter((e) => e.event === 'application.approved' && e.payload.mortgageId === mortgageId).length;
}

const ROUNDS = 5;

describe('applications', () => {
  it('approve, decline and withdraw at once on one referred application: one 200, the rest 409 invalid_transition', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const owner = await app.newAccount(`Race Lending ${round}`);
      const mortgageId = await draft(owner, REFERRABLE);
      const submitted = await owner.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId } } });
      expect(submitted.data!.status).toBe('referred');

      const path = { params: { path: { mortgageId } } };
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => [
          owner.client.POST('/v1/applications/{mortgageId}/approve', { ...path, body: {} }),
          owner.client.POST('/v1/applications/{mortgageId}/decline', { ...path, body: {} }),
          owner.client.POST('/v1/applications/{mortgageId}/withdraw', path),
        ]).flat(),
      );
      const winners = answers.filter((a) => a.response.status === 200);
      expect(winners).toHaveLength(1);
      for (const loser of answers.filter((a) => a.response.status !== 200)) {
        expect(loser.response.status).toBe(409);
        expect(loser.error).toMatchObject({ code: 'invalid_transition' });
      }
      const winner = winners[0]!.data!;
      const { data: now } = await owner.client.GET('/v1/applications/{mortgageId}', path);
      expect(now).toEqual(winner);
      expect(await approvals(owner, mortgageId)).toBe(winner.status === 'approved' ? 1 : 0);
    }
  });

  it('submit and withdraw at once on one draft: one 200, the rest 409', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const owner = await app.newAccount(`Draft Race Lending ${round}`);
      const mortgageId = await draft(owner, APPROVABLE);
      const path = { params: { path: { mortgageId } } };
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => [
          owner.client.POST('/v1/applications/{mortgageId}/submit', path),
          owner.client.POST('/v1/applications/{mortgageId}/withdraw', path),
        ]).flat(),
      );
      expect(answers.map((a) => a.response.status).filter((s) => s === 200)).toHaveLength(1);
      expect(answers.map((a) => a.response.status).filter((s) => s !== 200)).toEqual(Array(9).fill(409));
      const winner = answers.find((a) => a.response.status === 200)!.data!;
      expect((await owner.client.GET('/v1/applications/{mortgageId}', path)).data).toEqual(winner);
      expect(await approvals(owner, mortgageId)).toBe(winner.status === 'approved' ? 1 : 0);
    }
  });
});

describe('API keys', () => {
  it("two admin keys revoking each other at once: exactly one is revoked, and the account keeps an admin key", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const owner = await app.newAccount(`Key Race Lending ${round}`);
      const first = (await owner.client.GET('/v1/api-keys')).data!.data.find((k) => k.role === 'admin')!;
      const { data: second } = await owner.client.POST('/v1/api-keys', { body: { role: 'admin', name: 'Second admin' } });
      const secondClient = app.clientFor(second!.apiKey);

      const answers = await Promise.all([
        owner.client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: second!.keyId } } }),
        secondClient.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: first.keyId } } }),
      ]);
      const statuses = answers.map((a) => a.response.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      // The other is refused as the last admin key, or, when the revocation of its own key came first, not authenticated.
      const loser = answers.find((a) => a.response.status !== 200)!;
      expect([422, 401]).toContain(loser.response.status);
      if (loser.response.status === 422) expect(loser.error).toMatchObject({ code: 'last_admin_key' });

      const survivor = statuses[0] === 200 ? owner.client : secondClient;
      const keys = (await survivor.GET('/v1/api-keys')).data!.data;
      expect(keys.filter((k) => k.role === 'admin' && k.revokedAt === null)).toHaveLength(1);
    }
  });
});
