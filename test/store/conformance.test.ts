/**
 * Store conformance: the same repositories give the same JS values on each engine, and the
 * engine keeps the promises of the Store interface (transactions, reads, the outbox claim,
 * idempotency claims, pagination, streaming). Runs in both vitest projects (TEST_ENGINE).
 * Every repository of src/store is here; the shared rate-limit counters exist on PostgreSQL only.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import { findAccount, insertAccount, insertTestEnvironment, lockAccount } from '../../src/store/accounts.ts';
import { countActiveAdminKeys, findApiKeyByHash, insertApiKey, listApiKeys, markApiKeyRevoked } from '../../src/store/apiKeys.ts';
import { findApplication, insertApplication, listApplications, updateApplication, type ApplicationRecord } from '../../src/store/applications.ts';
import { findBankPartner, insertBankPartner, addPartnerAccount, listPartnerAccounts } from '../../src/store/bankPartners.ts';
import { insertBankVerification, listBankVerifications, failedVerificationTimes } from '../../src/store/bankVerifications.ts';
import { CHUNK_BYTES, documentContent } from '../../src/store/documentContent.ts';
import { deleteEnvironmentData } from '../../src/store/environmentData.ts';
import { findEvent, listEvents, pruneEventsBefore } from '../../src/store/events.ts';
import { findDocument, insertDocument, listDocuments } from '../../src/store/documents.ts';
import { findExportFormat, insertExportFormat, listExportFormats, countExportFormats } from '../../src/store/exportFormats.ts';
import { exportBatches, exportBounds } from '../../src/store/exportRecords.ts';
import { IN_PROGRESS_STATUS, claimIdempotencyKey, findStoredResponse, releaseIdempotencyClaim, saveStoredResponse } from '../../src/store/idempotency.ts';
import type { OpenedStore } from '../../src/store/open.ts';
import { autocommit } from '../../src/store/store.ts';
import { dueDeliveries, insertDeliveries, insertEvent, leaseDeliveries, leasedDeliveries, recordAttempt } from '../../src/store/outbox.ts';
import { findPricingContext, saveRateSheet } from '../../src/store/pricing.ts';
import { findQuote, insertQuote, type QuoteRecord } from '../../src/store/quotes.ts';
import { countRequest, deleteRateLimitWindows, uncountRequest } from '../../src/store/rateLimits.ts';
import { deleteEndedSessions, deleteUserSessions, findSession, insertSession, markSecondFactorChecked, renewSessionId, setSessionEnvironment, touchSession } from '../../src/store/sessions.ts';
import {
  accountRequiresMfa,
  claimTotpStep,
  clearUserMfa,
  confirmPendingSecret,
  countUnusedRecoveryCodes,
  findUserMfa,
  listEnrolledUserIds,
  replaceRecoveryCodes,
  setAccountMfaRequired,
  setPendingSecret,
  useRecoveryCode,
  userHasMfa,
} from '../../src/store/mfa.ts';
import { countAccountAdmins, deleteUser, emailTaken, findAccountUser, findUserByEmail, insertUser, listAccountUsers, setUserRole } from '../../src/store/users.ts';
import { findInvitationByTokenHash, insertInvitation, listOpenInvitations, markInvitationAccepted, markInvitationRevoked } from '../../src/store/invitations.ts';
import { findUnderwritingRules, saveUnderwritingRules } from '../../src/store/underwriting.ts';
import { disableEndpoint, findEndpoint, insertEndpoint, listAttempts } from '../../src/store/webhooks.ts';
import { onPostgres, openTestStore, testEngine } from '../helpers/engine.ts';
import { EMPTY_APPLICATION_DATA } from '../../src/domain/applications/applicationData.ts';

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
    ...EMPTY_APPLICATION_DATA,
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
    conditions: [],
    rateLock: null,
    ...overrides,
  };
}

describe(`store conformance (${testEngine()})`, () => {
  describe('values', () => {
    it('gives back timestamps as ISO text with milliseconds and Z, cents as numbers, counts as numbers', async () => {
      expect(await store.read((db) => findAccount(db, accountId))).toEqual({
        accountId,
        name: 'Conformance Lending',
        email: 'ops@conf.test',
        currency: 'USD',
        createdAt: T0,
        // Inserted without a version: pinned to the first, as the accounts that predate versions are.
        apiVersion: '2026-11-21',
        apiVersionChangedAt: null,
        previousApiVersion: null,
      });
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
        conditions: [{ type: 'custom' as const, description: 'Letter from the employer', dueBefore: 'funding' as const }],
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
        conditions: [],
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
          await insertApiKey(tx, { keyId, accountId, name: `k${i}`, role: i === 0 ? 'member' : 'admin', scopes: null, hint: 'mos_…abcd', createdAt: at(i), lastUsedAt: null, revokedAt: null }, `hash-${keyId}`);
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
      const page = await store.read((db) => listApplications(db, accountId, { statuses: ['withdrawn'] }, { limit: 10 }));
      expect(page.items.map((x) => x.mortgageId)).toContain(a.mortgageId);
      const either = await store.read((db) => listApplications(db, accountId, { statuses: ['approved', 'withdrawn'] }, { limit: 10 }));
      expect(either.items.map((x) => x.mortgageId)).toContain(a.mortgageId);
      expect((await store.read((db) => listApplications(db, accountId, { statuses: ['approved', 'declined'] }, { limit: 10 }))).items.map((x) => x.mortgageId)).not.toContain(a.mortgageId);
      expect((await store.read((db) => listApplications(db, accountId, { statuses: [] }, { limit: 10 }))).items).toEqual([]);
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
      if (onPostgres()) {
        // Kept in rows of at most CHUNK_BYTES, so neither the write nor a read holds the document whole.
        const rows = await store.read((db) => db.all<{ seq: number; size: number }>('SELECT seq, LENGTH(data) AS size FROM document_chunks WHERE document_id = ? ORDER BY seq', [documentId]));
        expect(rows.map((r) => r.seq)).toEqual([0, 1, 2]);
        expect(rows.map((r) => r.size)).toEqual([CHUNK_BYTES, CHUNK_BYTES, bytes.length - 2 * CHUNK_BYTES]);
      }
    });

    it('quotes: every figure reads back exactly as written (cents, decimal percentages, fees)', async () => {
      const quote: QuoteRecord = {
        quoteId: newId('qte'),
        amount: 350000.01,
        term: 30,
        currency: 'USD',
        propertyValue: 437500,
        creditScore: 742,
        interestRate: 6.125,
        apr: 6.3141,
        monthlyPayment: 2126.64,
        numberOfPayments: 360,
        finalPayment: 2126.49,
        totalInterest: 415590.25,
        totalOfPayments: 765590.26,
        fees: [
          { name: 'origination', amount: 1750, prepaidFinanceCharge: true },
          { name: 'appraisal', amount: 650.5, prepaidFinanceCharge: false },
        ],
        amountFinanced: 348250.01,
        financeCharge: 417340.25,
        ltv: 80.000002,
        lockPeriodDays: 30,
        createdAt: T0,
        expiresAt: at(30 * 86_400_000),
      };
      await store.transaction((tx) => insertQuote(tx, accountId, quote));
      expect(await store.read((db) => findQuote(db, accountId, quote.quoteId))).toEqual(quote);
      expect(await store.read((db) => findQuote(db, newId('acc'), quote.quoteId))).toBeUndefined();
    });

    it('events: the feed pages newest first, filters by kind, leaves test samples out, and prunes oldest first', async () => {
      const feedAccount = newId('acc');
      await store.transaction((tx) => insertAccount(tx, { accountId: feedAccount, name: 'Feed', email: 'f@f.test', currency: 'USD', createdAt: T0 }));
      const ids = [1, 2, 3, 4].map((n) => newId('evt', Date.parse(T0) + n));
      await store.transaction(async (tx) => {
        for (const [i, eventId] of ids.entries()) {
          const type = i === 1 ? 'document.uploaded' : 'application.approved';
          await insertEvent(tx, { eventId, accountId: feedAccount, type, payload: `{"event":"${type}","n":${i}}`, occurredAt: at(i * 1000), isTest: i === 3 });
        }
      });
      const query = { accountId: feedAccount, keptSince: T0 };
      const first = await store.read((db) => listEvents(db, query, { limit: 2 }));
      expect(first.items.map((e) => e.eventId)).toEqual([ids[2], ids[1]]); // the test sample (ids[3]) is not in the feed
      const second = await store.read((db) => listEvents(db, query, { limit: 2, afterId: first.lastId! }));
      expect(second.items).toEqual([{ eventId: ids[0], type: 'application.approved', payload: '{"event":"application.approved","n":0}', occurredAt: T0 }]);
      expect((await store.read((db) => listEvents(db, { ...query, type: 'document.uploaded' }, { limit: 10 }))).items.map((e) => e.eventId)).toEqual([ids[1]]);
      expect(await store.read((db) => findEvent(db, feedAccount, ids[1]!, T0))).toMatchObject({ eventId: ids[1], occurredAt: at(1000) });
      expect(await store.read((db) => findEvent(db, feedAccount, ids[1]!, at(1001)))).toBeUndefined();
      const pruned = await store.transaction((tx) => pruneEventsBefore(tx, at(1500), 10));
      expect(pruned).toBeGreaterThanOrEqual(2); // other tests' older events may go too
      expect((await store.read((db) => listEvents(db, query, { limit: 10 }))).items.map((e) => e.eventId)).toEqual([ids[2]]);
    });

    it('environment data: removing a test environment counts what went and leaves its live environment as it was', async () => {
      const live = newId('acc');
      const test = `${live}.test`;
      await store.transaction(async (tx) => {
        await insertAccount(tx, { accountId: live, name: 'Two Modes', email: 'm@m.test', currency: 'USD', createdAt: T0 });
        await insertTestEnvironment(tx, live, test);
      });
      const populate = async (owner: string) => {
        const a = application({ accountId: owner });
        const documentId = newId('doc');
        const source = path.join(dataDir, `env-${owner}.bin`);
        await writeFile(source, Buffer.from('%PDF-1.4\n%%EOF\n'));
        const content = documentContent(store, dataDir);
        await content.prepare(documentId, source);
        await store.transaction(async (tx) => {
          await insertApplication(tx, a);
          await insertDocument(tx, { documentId, accountId: owner, mortgageId: a.mortgageId, documentType: 'other', contentType: 'application/pdf', sizeBytes: 15, sha256: 'x', fileName: null, createdAt: T0 });
          await content.write(tx, documentId, source);
          await insertEvent(tx, { eventId: newId('evt'), accountId: owner, type: 'application.approved', payload: '{}', occurredAt: T0, isTest: false });
          await insertExportFormat(tx, { accountId: owner, name: 'pipes', base: 'csv', description: null, csv: { delimiter: '|' } as never, createdAt: T0, updatedAt: T0 });
          await saveUnderwritingRules(tx, owner, { debtToIncome: { approveAtMost: 40, referAtMost: 45 }, loanToValue: { approveAtMost: 80, referAtMost: 90 }, creditScore: { approveAtLeast: 700, referAtLeast: 650 }, loanAmount: { approveAtMost: 500000, referAtMost: 600000 } }, T0);
        });
        return { mortgageId: a.mortgageId, documentId };
      };
      const rowsOf = (owner: string) =>
        store.read(async (db) => {
          const counts: Record<string, number> = {};
          for (const table of ['applications', 'documents', 'webhook_events', 'export_formats', 'underwriting_rules']) {
            counts[table] = Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ?`, [owner]))!.n);
          }
          return counts;
        });
      const liveDoc = await populate(live);
      const testDoc = await populate(test);
      const liveBefore = await rowsOf(live);
      expect(Object.values(liveBefore)).toEqual([1, 1, 1, 1, 1]);

      const removed = await store.transaction((tx) => deleteEnvironmentData(tx, test));
      expect(removed).toEqual({
        quotes: 0,
        applications: 1,
        documents: 1,
        bankVerifications: 0,
        webhooks: 0,
        webhookDeliveryAttempts: 0,
        events: 1,
        exportFormats: 1,
        settingsReset: true,
        documentIds: [testDoc.documentId],
      });
      expect(Object.values(await rowsOf(test))).toEqual([0, 0, 0, 0, 0]);
      expect(await rowsOf(live)).toEqual(liveBefore);
      // The live document's bytes are still there (on PostgreSQL its chunks; the test document's went with its row).
      const { size } = await documentContent(store, dataDir).open(liveDoc.documentId);
      expect(size).toBe(15);
      if (onPostgres()) {
        expect(await store.read((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM document_chunks WHERE document_id = ?', [testDoc.documentId]))).toEqual({ n: 0 });
      }
    });

    it('dashboard users, sessions and invitations', async () => {
      const userId = newId('usr');
      const user = { userId, accountId, email: `admin-${userId}@conf.test`, role: 'admin' as const, createdAt: T0 };
      await store.transaction((tx) => insertUser(tx, user, '$scrypt$hash'));
      expect(await store.read((db) => findUserByEmail(db, user.email))).toEqual({ user, passwordHash: '$scrypt$hash' });
      expect(await store.read((db) => emailTaken(db, user.email))).toBe(true);
      // It locks the user's row on PostgreSQL (a role change or removal reads it so), hence a transaction.
      expect(await store.transaction((tx) => findAccountUser(tx, accountId, userId))).toEqual(user);
      expect(await store.transaction((tx) => findAccountUser(tx, newId('acc'), userId))).toBeUndefined();
      expect((await store.read((db) => listAccountUsers(db, accountId))).map((u) => u.userId)).toContain(userId);
      const admins = await store.read((db) => countAccountAdmins(db, accountId));
      await store.transaction((tx) => setUserRole(tx, userId, 'member'));
      expect(await store.read((db) => countAccountAdmins(db, accountId))).toBe(admins - 1);

      const session = { idHash: `hash-${userId}`, userId, csrfToken: 'csrf', createdAt: T0, lastSeenAt: T0, expiresAt: at(3_600_000), environment: 'live' as const, stage: 'signed_in' as const, secondFactorAt: null };
      await store.transaction((tx) => insertSession(tx, session));
      await store.transaction(async (tx) => {
        await touchSession(tx, session.idHash, at(60_000));
        await setSessionEnvironment(tx, session.idHash, 'test');
      });
      expect(await store.read((db) => findSession(db, session.idHash))).toEqual({
        session: { ...session, lastSeenAt: at(60_000), environment: 'test' },
        user: { ...user, role: 'member' },
        mfa: { enrolled: false, required: false },
      });
      expect(await store.transaction((tx) => deleteEndedSessions(tx, at(60_001), at(0)))).toBe(0); // neither expired nor idle
      expect(await store.transaction((tx) => deleteEndedSessions(tx, at(3_600_000), at(0)))).toBeGreaterThanOrEqual(1);
      expect(await store.read((db) => findSession(db, session.idHash))).toBeUndefined();

      const invitation = { invitationId: newId('inv'), accountId, email: `new-${userId}@conf.test`, role: 'member' as const, invitedBy: userId, createdAt: T0, expiresAt: at(7 * 86_400_000), acceptedAt: null, revokedAt: null };
      await store.transaction((tx) => insertInvitation(tx, invitation, `token-${userId}`));
      expect(await store.read((db) => findInvitationByTokenHash(db, `token-${userId}`))).toEqual(invitation);
      expect((await store.read((db) => listOpenInvitations(db, accountId, at(1)))).map((i) => i.invitationId)).toContain(invitation.invitationId);
      expect(await store.transaction((tx) => markInvitationAccepted(tx, invitation.invitationId, at(2)))).toBe(true);
      expect(await store.transaction((tx) => markInvitationAccepted(tx, invitation.invitationId, at(3)))).toBe(false);
      expect(await store.transaction((tx) => markInvitationRevoked(tx, accountId, invitation.invitationId, at(4)))).toBe(false);
      expect((await store.read((db) => listOpenInvitations(db, accountId, at(5)))).map((i) => i.invitationId)).not.toContain(invitation.invitationId);

      await store.transaction((tx) => deleteUser(tx, userId));
      expect(await store.read((db) => emailTaken(db, user.email))).toBe(false);
    });

    it("dashboard users' second factor: sealed secrets, steps taken once, recovery codes used once, the requirement, sessions", async () => {
      const userId = newId('usr');
      const user = { userId, accountId, email: `mfa-${userId}@conf.test`, role: 'admin' as const, createdAt: T0 };
      await store.transaction((tx) => insertUser(tx, user, '$scrypt$hash'));
      expect(await store.read((db) => findUserMfa(db, userId))).toEqual({ secret: null, pendingSecret: null, enrolledAt: null, lastStep: null });
      await store.transaction((tx) => setPendingSecret(tx, userId, 'JBSWY3DPEHPK3PXP'));
      const raw = await store.read((db) => db.get<{ totp_pending_secret: string }>('SELECT totp_pending_secret FROM users WHERE id = ?', [userId]));
      expect(raw!.totp_pending_secret).not.toContain('JBSWY3DPEHPK3PXP'); // sealed at rest
      expect(await store.transaction((tx) => claimTotpStep(tx, userId, 5))).toBe(false); // nothing enrolled yet
      expect(await store.transaction((tx) => confirmPendingSecret(tx, userId, 100, at(1)))).toBe(true);
      expect(await store.transaction((tx) => confirmPendingSecret(tx, userId, 101, at(2)))).toBe(false);
      expect(await store.read((db) => findUserMfa(db, userId))).toEqual({ secret: 'JBSWY3DPEHPK3PXP', pendingSecret: null, enrolledAt: at(1), lastStep: 100 });
      expect(await store.read((db) => userHasMfa(db, userId))).toBe(true);
      expect(await store.read((db) => listEnrolledUserIds(db, accountId))).toContain(userId);
      expect(await store.transaction((tx) => claimTotpStep(tx, userId, 100))).toBe(false);
      expect(await store.transaction((tx) => claimTotpStep(tx, userId, 99))).toBe(false);
      expect(await store.transaction((tx) => claimTotpStep(tx, userId, 101))).toBe(true);
      expect((await store.read((db) => findUserMfa(db, userId)))!.lastStep).toBe(101);

      await store.transaction((tx) => replaceRecoveryCodes(tx, userId, ['h1', 'h2', 'h3'], at(3)));
      expect(await store.read((db) => countUnusedRecoveryCodes(db, userId))).toBe(3);
      expect(await store.transaction((tx) => useRecoveryCode(tx, userId, 'h2', at(4)))).toBe(true);
      expect(await store.transaction((tx) => useRecoveryCode(tx, userId, 'h2', at(5)))).toBe(false);
      expect(await store.transaction((tx) => useRecoveryCode(tx, userId, 'nope', at(5)))).toBe(false);
      expect(await store.read((db) => countUnusedRecoveryCodes(db, userId))).toBe(2);

      expect(await store.read((db) => accountRequiresMfa(db, accountId))).toBe(false);
      await store.transaction((tx) => setAccountMfaRequired(tx, accountId, true));
      expect(await store.read((db) => accountRequiresMfa(db, accountId))).toBe(true);
      const session = { idHash: `mfa-${userId}`, userId, csrfToken: 'csrf', createdAt: T0, lastSeenAt: T0, expiresAt: at(3_600_000), environment: 'live' as const, stage: 'second_factor' as const, secondFactorAt: null };
      await store.transaction((tx) => insertSession(tx, session));
      expect((await store.read((db) => findSession(db, session.idHash)))!.mfa).toEqual({ enrolled: true, required: true });
      await store.transaction((tx) => markSecondFactorChecked(tx, session.idHash, at(6)));
      expect((await store.read((db) => findSession(db, session.idHash)))!.session).toMatchObject({ stage: 'signed_in', secondFactorAt: at(6) });
      // A new id and token: the old id finds nothing, the new one the same session.
      expect(await store.transaction((tx) => renewSessionId(tx, session.idHash, { idHash: `renewed-${userId}`, csrfToken: 'csrf2' }))).toBe(1);
      expect(await store.read((db) => findSession(db, session.idHash))).toBeUndefined();
      expect((await store.read((db) => findSession(db, `renewed-${userId}`)))!.session).toMatchObject({ csrfToken: 'csrf2', stage: 'signed_in', secondFactorAt: at(6), createdAt: T0 });
      expect(await store.transaction((tx) => renewSessionId(tx, session.idHash, { idHash: 'again', csrfToken: 'csrf3' }))).toBe(0);
      await store.transaction((tx) => setAccountMfaRequired(tx, accountId, false));

      await store.transaction((tx) => clearUserMfa(tx, userId));
      expect(await store.read((db) => findUserMfa(db, userId))).toEqual({ secret: null, pendingSecret: null, enrolledAt: null, lastStep: null });
      expect(await store.read((db) => countUnusedRecoveryCodes(db, userId))).toBe(0);
      expect(await store.transaction((tx) => deleteUserSessions(tx, userId))).toBe(1);
      await store.transaction((tx) => deleteUser(tx, userId));
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

    it('autocommit(): the write of the unit is committed when it resolves; on PostgreSQL a one-INSERT unit is one statement and one round trip', async () => {
      const a = application();
      const before = onPostgres() ? (store as unknown as { stats(): { statements: number; roundTrips: number } }).stats() : null;
      await autocommit(store, (tx) => insertApplication(tx, a));
      if (before) {
        const after = (store as unknown as { stats(): { statements: number; roundTrips: number } }).stats();
        expect([after.statements - before.statements, after.roundTrips - before.roundTrips]).toEqual([1, 1]);
      }
      expect(await store.read((db) => findApplication(db, accountId, a.mortgageId))).toBeDefined();
      // A unit that fails before writing leaves nothing, on either engine.
      const b = application();
      await expect(autocommit(store, async () => Promise.reject(new Error('refused before writing')))).rejects.toThrow('refused before writing');
      expect(await store.read((db) => findApplication(db, accountId, b.mortgageId))).toBeUndefined();
    });

    it.skipIf(!onPostgres())('a transaction of one INSERT is two round trips on PostgreSQL (BEGIN written with the INSERT, COMMIT); a unit that runs nothing, none', async () => {
      const stats = () => (store as unknown as { stats(): { statements: number; roundTrips: number } }).stats();
      const before = stats();
      await store.transaction((tx) => insertApplication(tx, application()));
      const middle = stats();
      expect([middle.statements - before.statements, middle.roundTrips - before.roundTrips]).toEqual([3, 2]);
      await store.transaction(async () => 'nothing to do');
      await store.read(async () => 'nothing to read');
      expect(stats()).toEqual(middle);
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
      await store.transaction((tx) => insertEndpoint(tx, { webhookId, accountId, url: 'https://example.test/hook', description: '', events: ['application.approved'], secret: 'whsec_abcd', createdAt: T0, apiVersion: '2026-12-07' }));
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

  // sql.js counts in its one process (src/domain/limits/windowCounter.ts); only PostgreSQL has the shared table.
  describe.runIf(onPostgres())('shared rate-limit counters', () => {
    it('count each request once however many count together, give one back, and drop ended windows', async () => {
      const bucket = `key:${newId('key')}`;
      const hits = await Promise.all(Array.from({ length: 12 }, () => store.transaction((tx) => countRequest(tx, bucket, T0))));
      expect([...hits].sort((x, y) => x - y)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      await store.transaction((tx) => uncountRequest(tx, bucket, T0));
      expect(await store.transaction((tx) => countRequest(tx, bucket, T0))).toBe(12);
      expect(await store.transaction((tx) => countRequest(tx, bucket, at(60_000)))).toBe(1); // the next window starts at 1
      expect(await store.transaction((tx) => deleteRateLimitWindows(tx, at(60_000)))).toBeGreaterThanOrEqual(1);
      expect(await store.transaction((tx) => countRequest(tx, bucket, T0))).toBe(1);
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
      // The latest verification of each application counts: by checked_at, then by id; never by the order of insertion.
      const partnerId = newId('bnk');
      const checked = (mortgageId: string, verificationId: string, checkedAt: string, verified: boolean) => ({
        verificationId,
        accountId: streamAccount,
        mortgageId,
        partnerId,
        verified,
        accountMask: verificationId.slice(-4),
        accountNumberHash: 'h',
        linkedAccountHash: 'l',
        nameScore: 1,
        nameOutcome: 'match' as const,
        failedChecks: [],
        checkedAt,
      });
      const verificationIds = [1, 2, 3, 4, 5, 6].map((n) => newId('bvf', Date.parse(T0) + n));
      await store.transaction(async (tx) => {
        await insertBankPartner(tx, { partnerId, name: 'Stream Bank', connector: 'sandbox', baseUrl: null, credentialSealed: null, restricted: false, disabledAt: null, createdAt: T0, updatedAt: T0 });
        await insertBankVerification(tx, checked(ids[0]!, verificationIds[2]!, at(2), true));
        await insertBankVerification(tx, checked(ids[0]!, verificationIds[0]!, at(3), false));
        await insertBankVerification(tx, checked(ids[0]!, verificationIds[1]!, at(1), false));
        await insertBankVerification(tx, checked(ids[1]!, verificationIds[3]!, at(2), false));
        await insertBankVerification(tx, checked(ids[1]!, verificationIds[5]!, at(2), true));
        await insertBankVerification(tx, checked(ids[1]!, verificationIds[4]!, at(2), false));
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
      const first = await (async () => {
        for await (const batch of exportBatches(store, query, { first: 40, rest: 40 })) return batch;
      })();
      expect(first?.[0]).toMatchObject({ mortgageId: ids[0], amountCents: 35000025, currency: 'EUR', createdAt: T0 });
      expect(first?.[0]?.bankVerification).toEqual({ verified: false, accountMask: verificationIds[0]!.slice(-4), checkedAt: at(3) });
      expect(first?.[1]?.bankVerification).toEqual({ verified: true, accountMask: verificationIds[5]!.slice(-4), checkedAt: at(2) });
      expect(first?.[2]?.bankVerification).toBeNull();
      // After a reader stopped early, the store serves everything else as before.
      expect(await store.read((db) => findAccount(db, streamAccount))).toBeDefined();
    });
  });
});
