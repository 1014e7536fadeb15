/**
 * Test mode's own operations: sandbox bank tokens a partner issues itself, and removing the test
 * environment's data. Both act only on a test environment; for a live one there is nothing here
 * (404, as for a path that does not exist).
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { recordAudit, recordAuditNow } from './audit.ts';
import { bankKeys } from '../banks/secrets.ts';
import { mintSandboxToken, TEST_MODE_PARTNER_ID } from '../banks/sandbox.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { accountMask } from '../domain/banks/accountNumber.ts';
import { fail } from '../errors.ts';
import { findBankPartner } from '../store/bankPartners.ts';
import { documentContent } from '../store/documentContent.ts';
import { deleteEnvironmentData } from '../store/environmentData.ts';
import { bindBankTokenAtIssue } from './bankTokens.ts';

export type TestBankToken = components['schemas']['TestBankToken'];
export type TestDataDeleted = components['schemas']['TestDataDeleted'];

function requireTestEnvironment(accountId: string): void {
  if (isLivemode(accountId)) {
    throw fail.notFound('Test-mode operations take a test key (mos_test_…); a live key has nothing at this path.');
  }
}

/** A token of the test-mode sandbox bank for an account of `holderName`, good for this test environment's applications only. */
export async function issueTestBankToken(
  ctx: AppContext,
  accountId: string,
  input: { holderName: string; accountNumber: string },
): Promise<TestBankToken> {
  requireTestEnvironment(accountId);
  const partner = await ctx.store.read((db) => findBankPartner(db, TEST_MODE_PARTNER_ID));
  if (!partner || partner.disabledAt) {
    throw fail.unavailable('test_bank_disabled', "The operator of this service has turned the test-mode sandbox bank off; ask them to enable it.", 3600);
  }
  const keys = await bankKeys(ctx.config);
  const { token, expiresAt } = mintSandboxToken(
    keys.sandboxToken,
    TEST_MODE_PARTNER_ID,
    { holder: input.holderName, accountNumber: input.accountNumber },
    ctx.clock.now(),
    ctx.config.bank.sandboxTokenTtlSeconds,
    accountId,
  );
  await bindBankTokenAtIssue(ctx, partner, token, expiresAt);
  const mask = accountMask(input.accountNumber);
  // The token is a secret and the account number is never kept whole: the entry holds the mask.
  await recordAuditNow(ctx, { accountId, action: 'bankToken.issued', target: { type: 'bankToken', id: null }, change: { before: null, after: { accountMask: mask, expiresAt } } });
  return { bankToken: token, accountMask: mask, expiresAt, livemode: false };
}

/**
 * Removes every test record of the environment in one transaction (API keys stay), then the
 * removed documents' bytes. Should the process stop between the two, the files left behind are
 * unreachable (no row names them) and harmless; nothing live is ever touched.
 */
export async function deleteTestData(ctx: AppContext, accountId: string): Promise<TestDataDeleted> {
  requireTestEnvironment(accountId);
  // The audit log is not the environment's data: it stays, and records the deletion.
  const removed = await ctx.store.transaction(async (tx) => {
    const gone = await deleteEnvironmentData(tx, accountId);
    const { documentIds: _ids, ...counts } = gone;
    await recordAudit(tx, ctx, { accountId, action: 'testData.deleted', target: { type: 'testData', id: accountId }, change: { before: counts, after: null } });
    return gone;
  });
  const content = documentContent(ctx.store, ctx.config.dataDir);
  for (const documentId of removed.documentIds) {
    await content.discard(documentId).catch((err: unknown) => ctx.log.warn({ err, documentId }, 'could not remove a deleted test document'));
  }
  const { documentIds, settingsReset, ...deleted } = removed;
  ctx.log.info({ accountId, ...deleted, settingsReset }, 'test data removed');
  return { deleted, settingsReset, livemode: false };
}
