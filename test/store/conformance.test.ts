/**
 * Store conformance: the same repositories give the same JS values on each engine, and the
 * engine keeps the promises of the Store interface (transactions, reads, the outbox claim,
 * idempotency claims, pagination, streaming). Runs in both vitest projects (TEST_ENGINE).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { findAccount, insertAccount, lockAccount } from '../../src/store/accounts.ts';
import { countActiveAdminKeys, findApiKeyByHash, insertApiKey, listApiKeys, markApiKeyRevoked } from '../../src/store/apiKeys.ts';
import { findApplication, insertApplication, listApplications, updateApplication, type ApplicationRecord } from '../../src/store/applications.ts';
import { findBankPartner, insertBankPartner, addPartnerAccount, listPartnerAccounts } from '../../src/store/bankPartners.ts';
import { insertBankVerification, listBankVerifications, failedVerificationTimes } from '../../src/store/bankVerifications.ts';
import { documentContent } from '../../src/store/documentContent.ts';
import { deleteEnvironmentData } from '../../src/store/environmentData.ts';
import { findDocument, insertDocument, listDocuments } from '../../src/store/documents.ts';
import { findExportFormat, insertExportFormat, listExportFormats, countExportFormats } from '../../src/store/exportFormats.ts';
import { exportBatches, exportBounds } from '../../src/store/exportRecords.ts';
import { IN_PROGRESS_STATUS, claimIdempotencyKey, findStoredResponse, releaseIdempotencyClaim, saveStoredResponse } from '../../src/store/idempotency.ts';
import type { OpenedStore } from '../../src/store/open.ts';
import { dueDeliveries, insertDeliveries, insertEvent, leaseDeliveries, leasedDeliveries, recordAttempt } from '../../src/store/outbox.ts';
import { findPricingContext, saveRateSheet } from '../../src/store/pricing.ts';
import { findUnderwritingRules, saveUnderwritingRules } from '../../src/store/underwriting.ts';
import { disableEndpoint, findEndpoint, insertEndpoint, listAttempts } from '../../src/store/webhooks.ts';
import { openTestStore, testEngine } from '../helpers/engine.ts';

let store: OpenedStore;
let dataDir: string;
let close: () => Promise<void>;
let accountId: string;
const T0 = '2026-11-21T18:30:00.123Z';
const at = (ms: number) => new Date(Date.parse(T0) + ms).toISOString();

beforeAll(async () => {
  ({ store, dataDir, close } = await openTestStore());
  accountId = newId('acc');
  await store.transaction((tx) => insertAccount(tx, { accountId, name: 'Conformance Lending', email: 'ops@conf.test', currency: 'USD', createdAt: T0 }));
});
afterAll(() => close?.());

function application(overrides: Partial<ApplicationRecord> = {}): ApplicationRecord {
  return {
    mortgageId: newId('mtg'),
    accountId,
    status: 'draft',
    applicantName: 'Jane Doe',
    applicantEmail: 'jane@example.test',
    amount: 350000.25,
    annualIncome: 120000,
    monthlyDebts: null,
    creditScore: 720,
    termYears: 30,
    propertyValue: 90_000_000_000.99, // 9e12 cents: past 32 bits, within 2^53
    quoteId: null,
    decision: null,
    submittedAt: null,
    decidedAt: null,
    withdrawnAt: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

describe(`store conformance (${testEngine()})`, () => {
  describe('values', () => {
    it('gives back timestamps as ISO text with milliseconds and Z, cents as numbers, counts as numbers', async () => {
      expect(await store.read((db) => findAccount(db, accountId))).toEqual({ accountId, name: 'Conformance Lending', email: 'ops@conf.test', currency: 'USD', createdAt: T0 });
      const a = application();
      await store.transaction((tx) => insertApplication(tx, a));
      expect(await store.read((db) => findApplication(db, accountId, a.mortgageId))).toEqual(a);
      const row = await store.read((db) => db.get<{ n: unknown; cents: unknown }>('SELECT COUNT(*) AS n, MAX(property_value_cents) AS cents FROM applications WHERE id = ?', [a.mortgageId]));
      expect(row).toEqual({ n: 1, cents: 9_000_000_000_099 });
    });

    it('keeps a decision object, JSON options and decimal text as they were written', async () => {
      const decision = { outcome: 'approved', decidedAt: T0, decidedBy: 'rules', reasons: [{ rule: 'dti', outcome: 'pass', detail: 'fine' }] } as const;
      const a = application({ status: 'approved', decision: decision as never, decidedAt: T0, submittedAt: T0 });
      await store.transaction((tx) => insertApplication(tx, a));
      const read = await store.read((db) => findApplication(db, accountId, a.mortgageId));
      expect(JSON.stringify(read!.decision)).toBe(JSON.stringify(decision));
      const rules = {
        debtToIncome: { approveAtMost: 43.5, referAtMost: 50 },
        loanToValue: { approveAtMost: 80, referAtMost: 95.125 },
        creditScore: { approveAtLeast: 680, referAtLeast: 620 },
        loanAmount: { approveAtMost: 1_000_000, referAtMost: 2_000_000.5 },
      };
      await store.transaction((tx) => saveUnderwritingRules(tx, accountId, rules, T0));
      expect(await store.read((db) => findUnderwritingRules(db, accountId))).toEqual({ rules, updatedAt: T0 });
      const sheet = '{"b":1,"a":[2,3]}';
      await store.transaction((tx) => saveRateSheet(tx, accountId, sheet, T0));
      expect(await store.read((db) => findPricingContext(db, accountId))).toEqual({ currency: 'USD', sheetJson: sheet, updatedAt: T0 });
    });

    // sql.js remembers these between transactions (RowMemo): every read must still see exactly what the database holds.
    it('reads settings as they are after every change, a rolled-back change and a removal included', async () => {
      const envId = newId('acc');
      await store.transaction((tx) => insertAccount(tx, { accountId: envId, name: 'Settings Lending', email: 'ops@settings.test', currency: 'EUR', createdAt: T0 }));
      const rules = (approveAtMost: number) => ({
        debtToIncome: { approveAtMost, referAtMost: 50 },
        loanToValue: { approveAtMost: 80, referAtMost: 95 },
        creditScore: { approveAtLeast: 680, referAtLeast: 620 },
        loanAmount: { approveAtMost: 1_000_000, referAtMost: 2_000_000 },
      });
      const context = () => store.read((db) => findPricingContext(db, envId));
      const storedRules = () => store.read((db) => findUnderwritingRules(db, envId));
      expect(await context()).toEqual({ currency: 'EUR', sheetJson: null, updatedAt: null });
      expect(await storedRules()).toBeUndefined();

      await store.transaction(async (tx) => {
        await saveRateSheet(tx, envId, '{"v":1}', at(1));
        await saveUnderwritingRules(tx, envId, rules(40), at(1));
      });
      expect(await context()).toEqual({ currency: 'EUR', sheetJson: '{"v":1}', updatedAt: at(1) });
      expect(await storedRules()).toEqual({ rules: rules(40), updatedAt: at(1) });

      // Changed and read inside a transaction that then fails: nothing of it is seen afterwards.
      await expect(
        store.transaction(async (tx) => {
          await saveRateSheet(tx, envId, '{"v":2}', at(2));
          await saveUnderwritingRules(tx, envId, rules(41), at(2));
          expect(await findPricingContext(tx, envId)).toEqual({ currency: 'EUR', sheetJson: '{"v":2}', updatedAt: at(2) });
          expect(await findUnderwritingRules(tx, envId)).toEqual({ rules: rules(41), updatedAt: at(2) });
          throw new Error('refused after reading');
        }),
      ).rejects.toThrow('refused after reading');
      expect(await context()).toEqual({ currency: 'EUR', sheetJson: '{"v":1}', updatedAt: at(1) });
      expect(await storedRules()).toEqual({ rules: rules(40), updatedAt: at(1) });

      const removed = await store.transaction((tx) => deleteEnvironmentData(tx, envId));
      expect(removed.settingsReset).toBe(true);
      expect(await context()).toEqual({ currency: 'EUR', sheetJson: null, updatedAt: null });
      expect(await storedRules()).toBeUndefined();
    });
  });

  describe('repositories', () => {
    it('api keys: insert, find by hash, page, count, revoke', async () => {
      const ids = [newId('key', 1), newId('key', 2), newId('key', 3)];
      await store.transaction(async (tx) => {
        for (const [i, keyId] of ids.entries()) {
          await insertApiKey(tx, { keyId, accountId, name: `k${i}`, role: i === 0 ? 'member' : 'admin', hint: 'mos_…abcd', createdAt: at(i), lastUsedAt: null, revokedAt: null }, `hash-${keyId}`);
        }
      });
      expect(await store.read((db) => findApiKeyByHash(db, `hash-${ids[1]}`))).toMatchObject({ keyId: ids[1], role: 'admin', createdAt: at(1), revokedAt: null });
      const first = await store.read((db) => listApiKeys(db, accountId, { limit: 2 }));
      expect(first.items.map((k) => k.keyId)).toEqual([ids[2], ids[1]]);
      const second = await store.read((db) => listApiKeys(db, accountId, { limit: 2, afterId: first.lastId! }));
      expect(second.items.map((k) => k.keyId)).toEqual([ids[0]]);
      expect(second.lastId).toBeNull();
      expect(await store.read((db) => countActiveAdminKeys(db, accountId))).toBe(2);
      await store.transaction((tx) => markApiKeyRevoked(tx, ids[2]!, at(10)));
      expect(await store.read((db) => countActiveAdminKeys(db, accountId))).toBe(1);
    });

    it('applications: a conditional update moves only from the expected status', async () => {
      const a = application();
      await store.transaction((tx) => insertApplication(tx, a));
      const moved = { ...a, status: 'withdrawn' as const, withdrawnAt: at(5), updatedAt: at(5) };
      expect(await store.transaction((tx) => updateApplication(tx, moved, 'draft'))).toBe(true);
      expect(await store.transaction((tx) => updateApplication(tx, { ...moved, status: 'draft' }, 'draft'))).toBe(false);
      expect(await store.read((db) => findApplication(db, accountId, a.mortgageId))).toEqual(moved);
      const page = await store.read((db) => listApplications(db, accountId, { status: 'withdrawn' }, { limit: 10 }));
      expect(page.items.map((x) => x.mortgageId)).toContain(a.mortgageId);
    });

    it('documents: metadata and content, streamed back byte for byte', async () => {
      const a = application();
      await store.transaction((tx) => insertApplication(tx, a));
      const documentId = newId('doc');
      const bytes = Buffer.alloc(700 * 1024 + 17);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) % 251;
      const source = path.join(dataDir, 'upload.bin');
      await writeFile(source, bytes);
      const content = documentContent(store, dataDir);
      await content.prepare(documentId, source);
      const record = { documentId, accountId, mortgageId: a.mortgageId, documentType: 'other' as const, contentType: 'application/pdf' as const, sizeBytes: bytes.length, sha256: 'x', fileName: null, createdAt: T0 };
      await store.transaction(async (tx) => {
        await insertDocument(tx, record);
        await content.write(tx, documentId, source);
      });
      expect(await store.read((db) => findDocument(db, accountId, a.mortgageId, documentId))).toEqual(record);
      expect((await store.read((db) => listDocuments(db, accountId, a.mortgageId, { limit: 5 }))).items).toEqual([record]);
      const { stream, size } = await content.open(documentId);
      expect(size).toBe(bytes.length);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    });

    it('export formats, bank partners and verifications', async () => {
      await store.transaction(async (tx) => {
        for (const name of ['beta', 'alpha', 'gamma']) {
          await insertExportFormat(tx, { accountId, name, base: 'csv', description: null, csv: { delimiter: ';' } as never, createdAt: T0, updatedAt: T0 });
        }
      });
      expect(await store.read((db) => findExportFormat(db, accountId, 'alpha'))).toMatchObject({ csv: { delimiter: ';' }, createdAt: T0 });
      const page = await store.read((db) => listExportFormats(db, accountId, { limit: 2 }));
      expect(page.items.map((f) => f.name)).toEqual(['alpha', 'beta']);
      expect((await store.read((db) => listExportFormats(db, accountId, { limit: 2, afterId: page.lastId! }))).items.map((f) => f.name)).toEqual(['gamma']);
      expect(await store.read((db) => countExportFormats(db, accountId))).toBe(3);

      const partnerId = newId('bnk');
      const partner = { partnerId, name: 'First Harbor', connector: 'sandbox' as const, baseUrl: null, credentialSealed: null, restricted: true, disabledAt: null, createdAt: T0, updatedAt: T0 };
      await store.transaction(async (tx) => {
        await insertBankPartner(tx, partner);
        await addPartnerAccount(tx, partnerId, accountId, T0);
        await addPartnerAccount(tx, partnerId, accountId, T0);
      });
      expect(await store.read((db) => findBankPartner(db, partnerId))).toEqual(partner);
      expect(await store.read((db) => listPartnerAccounts(db, partnerId))).toEqual([accountId]);
      const mortgageId = newId('mtg');
      const verification = {
        verificationId: newId('bvf'),
        accountId,
        mortgageId,
        partnerId,
        verified: false,
        accountMask: '6789',
        accountNumberHash: 'h1',
        linkedAccountHash: 'l1',
        nameScore: 0.875,
        nameOutcome: 'partial' as const,
        failedChecks: ['account_number' as const],
        checkedAt: at(1),
      };
      await store.transaction((tx) => insertBankVerification(tx, verification));
      expect((await store.read((db) => listBankVerifications(db, accountId, mortgageId))).at(-1)).toEqual(verification);
      expect(await store.read((db) => failedVerificationTimes(db, mortgageId, 'l1', T0))).toEqual([at(1)]);
    });
  });

  describe('transactions', () => {
    it('roll back everything when the function throws, and commit everything otherwise', async () => {
      const a = application();
      await expect(
        store.transaction(async (tx) => {
          await insertApplication(tx, a);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(await store.read((db) => findApplication(db, accountId, a.mortgageId))).toBeUndefined();
      await store.transaction((tx) => insertApplication(tx, a));
      expect(await store.read((db) => findApplication(db, accountId, a.mortgageId))).toBeDefined();
    });

    it('refuse writes inside read()', async () => {
      await expect(store.read((db) => db.run('DELETE FROM applications'))).rejects.toThrow();
    });

    it('two transactions racing on one conditional update: exactly one wins', async () => {
      const a = application();
      await store.transaction((tx) => insertApplication(tx, a));
      const move = (status: 'withdrawn' | 'submitted') =>
        store.transaction(async (tx) => {
          const current = await findApplication(tx, accountId, a.mortgageId);
          await lockAccount(tx, accountId);
          return updateApplication(tx, { ...current!, status, updatedAt: at(1) }, 'draft');
        });
      const results = await Promise.all([move('withdrawn'), move('submitted'), move('withdrawn'), move('submitted')]);
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('outbox', () => {
    it('claims a due delivery once however many claim together, and records the attempt only under the lease', async () => {
      const webhookId = newId('whk');
      await store.transaction((tx) => insertEndpoint(tx, { webhookId, accountId, url: 'https://example.test/hook', description: '', events: ['application.approved'], secret: 'whsec_abcd', createdAt: T0 }));
      const eventIds = [newId('evt'), newId('evt'), newId('evt')];
      await store.transaction(async (tx) => {
        for (const eventId of eventIds) {
          await insertEvent(tx, { eventId, accountId, type: 'application.approved', payload: '{"event":"application.approved"}', occurredAt: T0, isTest: false });
          await insertDeliveries(tx, { webhookIds: [webhookId], eventId, accountId, dueAt: T0 });
        }
      });
      const now = at(1000);
      const claim = (token: string) =>
        store.transaction(async (tx) => {
          const due = await dueDeliveries(tx, now, [], 10);
          if (due.length === 0) return 0;
          return leaseDeliveries(tx, webhookId, due.map((d) => d.event_id), now, at(60_000), token);
        });
      const taken = await Promise.all(['lease-a', 'lease-b', 'lease-c', 'lease-d'].map(claim));
      expect(taken.reduce((sum, n) => sum + n, 0)).toBe(3);
      const holder = ['lease-a', 'lease-b', 'lease-c', 'lease-d'][taken.findIndex((n) => n > 0)]!;
      const leased = await store.read((db) => leasedDeliveries(db, holder));
      expect(leased.length).toBeGreaterThan(0);
      expect(leased[0]).toMatchObject({ webhookId, accountId, url: 'https://example.test/hook', isTest: false, attempts: 0, occurredAt: T0 });
      const attempt = (token: string) => ({ attemptId: newId('dlv'), webhookId, eventId: leased[0]!.eventId, accountId, attempt: 1, attemptedAt: now, outcome: 'succeeded' as const, statusCode: 200, error: null, durationMs: 12, nextAttemptAt: null, token });
      expect(await store.transaction((tx) => recordAttempt(tx, attempt('someone-else'), 'someone-else'))).toBe(false);
      expect(await store.transaction((tx) => recordAttempt(tx, attempt(holder), holder))).toBe(true);
      const log = await store.read((db) => listAttempts(db, webhookId, { limit: 10 }));
      expect(log.items[0]).toMatchObject({ eventId: leased[0]!.eventId, statusCode: 200, attemptedAt: now, durationMs: 12, isTest: false });
      expect(await store.transaction((tx) => disableEndpoint(tx, webhookId, 'manual', now))).toBe(true);
      expect(await store.transaction((tx) => disableEndpoint(tx, webhookId, 'gone', now))).toBe(false);
      expect(await store.read((db) => findEndpoint(db, accountId, webhookId))).toMatchObject({ enabled: false, disabledReason: 'manual', disabledAt: now, secretTail: 'abcd' });
    });
  });

  describe('idempotency', () => {
    it('claims a key once through the primary key; a released claim can be taken again; a stored response is found', async () => {
      const notBefore = at(-86_400_000);
      const abandoned = at(-600_000);
      const claim = () => store.transaction((tx) => claimIdempotencyKey(tx, accountId, 'key-1', { requestHash: 'h', createdAt: T0 }, notBefore, abandoned));
      const results = await Promise.all([claim(), claim(), claim()]);
      expect(results.filter((r) => r === null)).toHaveLength(1);
      for (const r of results.filter((r) => r !== null)) expect(r!.status).toBe(IN_PROGRESS_STATUS);
      await store.transaction((tx) => releaseIdempotencyClaim(tx, accountId, 'key-1'));
      expect(await claim()).toBeNull();
      await store.transaction((tx) => saveStoredResponse(tx, accountId, 'key-1', { requestHash: 'h', status: 201, headers: { 'Content-Type': 'application/json' }, body: '{"ok":true}', createdAt: T0 }));
      await store.transaction((tx) => releaseIdempotencyClaim(tx, accountId, 'key-1')); // a stored response stays
      expect(await store.read((db) => findStoredResponse(db, accountId, 'key-1', notBefore))).toEqual({
        requestHash: 'h',
        status: 201,
        headers: { 'Content-Type': 'application/json' },
        body: '{"ok":true}',
        createdAt: T0,
      });
      expect(await claim()).toMatchObject({ status: 201 });
    });
  });

  describe('streaming', () => {
    it('streams an export in batches, oldest first, and stops when the reader stops', async () => {
      const streamAccount = newId('acc');
      await store.transaction((tx) => insertAccount(tx, { accountId: streamAccount, name: 'S', email: 's@s.test', currency: 'EUR', createdAt: T0 }));
      const ids: string[] = [];
      await store.transaction(async (tx) => {
        for (let i = 0; i < 250; i++) {
          const a = application({ accountId: streamAccount, mortgageId: newId('mtg', Date.parse(T0) + i) });
          ids.push(a.mortgageId);
          await insertApplication(tx, a);
        }
      });
      const bounds = await store.read((db) => exportBounds(db, streamAccount));
      expect(bounds).toEqual({ upToId: ids.at(-1), currency: 'EUR' });
      const query = { accountId: streamAccount, currency: 'EUR', upToId: bounds.upToId };
      const seen: string[] = [];
      for await (const batch of exportBatches(store, query, { first: 40, rest: 40 })) {
        expect(batch.length).toBeLessThanOrEqual(40);
        seen.push(...batch.map((r) => r.mortgageId));
      }
      expect(seen).toEqual(ids);
      expect((await (async () => {
        for await (const batch of exportBatches(store, query, { first: 40, rest: 40 })) return batch;
      })())?.[0]).toMatchObject({ mortgageId: ids[0], amountCents: 35000025, currency: 'EUR', createdAt: T0, bankVerification: null });
      // After a reader stopped early, the store serves everything else as before.
      expect(await store.read((db) => findAccount(db, streamAccount))).toBeDefined();
    });
  });
});
