/**
 * The operator's check of the audit log: `audit verify` checks the MACs of each hash chain's head
 * and pruning anchor, walks the chain from its anchor and names the first broken entry or moved
 * anchor (exit code 2; also when a MAC was made under a sealing key this process does not hold),
 * or says how many entries it checked.
 */
import { isLivemode, liveAccountId, testEnvironmentId } from '../domain/accounts/environments.ts';
import { isId } from '../ids.ts';
import { verifyAllAuditChains, verifyAuditChain, type ChainVerification } from '../services/audit.ts';
import { AdminCommandError, type AdminCommand } from './command.ts';

function refusal(broken: ChainVerification[]): AdminCommandError {
  const lines = broken.map((chain) =>
    chain.broken?.reason === 'anchor_key_unavailable'
      ? `audit chain of ${chain.accountId} was not checked: ${chain.firstBroken}`
      : `audit chain of ${chain.accountId} is broken at ${chain.firstBroken}`,
  );
  return new AdminCommandError(lines.join('\n'));
}

export const auditCommands: Record<string, AdminCommand> = {
  'audit verify': {
    description:
      "Check the audit log's hash chains (every account's live and test environment, or one account's with --account): " +
      'names the first entry whose content changed or whose predecessor is missing, or a head or pruning anchor moved in the database, and exits 2 if any ' +
      '(or if a MAC cannot be checked without the sealing key).',
    flags: { account: { description: 'an account id (acc-…: its live and test chains) or a test environment id (acc-….test)' } },
    async run(ctx, flags) {
      if (flags.account === undefined) {
        const all = await verifyAllAuditChains(ctx);
        if (all.broken.length > 0) throw refusal(all.broken);
        return { ok: true, chains: all.chains, entriesChecked: all.entriesChecked };
      }
      const account = flags.account.trim();
      if (!isId('acc', liveAccountId(account))) throw new AdminCommandError(`--account must be an account id (acc-…) or a test environment id (acc-….test), got "${account}"`);
      const chains = isLivemode(account) ? [account, testEnvironmentId(account)] : [account];
      const results = await Promise.all(chains.map((id) => verifyAuditChain(ctx, id)));
      const broken = results.filter((r) => !r.ok);
      if (broken.length > 0) throw refusal(broken);
      return { ok: true, chains: results.length, entriesChecked: results.reduce((n, r) => n + r.entriesChecked, 0) };
    },
  },
};
