/**
 * The audit chains' heads, exported at intervals for an operator to keep outside the database: a
 * writer who rolls the whole database back to an earlier consistent state (entries, heads and
 * their MACs together) leaves chains that `audit verify` passes, and only a record made before
 * tells. Each run logs (pino, info) every head that moved since the previous run (all of them at
 * the first), then one line summing them up: the number of chains, the sum of their heads' seqs
 * (every entry ever recorded), and a SHA-256 digest over every head; the metrics carry the same
 * three numbers (docs/operators/audit-log.md says how to compare).
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { listChainHeads } from '../store/auditEvents.ts';

/** How often the heads are exported. */
export const AUDIT_HEAD_EXPORT_INTERVAL_MS = 15 * 60 * 1000;
const PAGE = 500;

export interface AuditHeadsSummary {
  chains: number;
  /** The sum of every chain's head seq: how many entries were ever recorded (retention does not lower it). */
  entries: number;
  /** SHA-256 (hex) over the lines `<account id> <seq> <hash>\n` of every chain, in id order. */
  digest: string;
  /** Heads logged by this run (those that moved since the previous one). */
  logged: number;
}

/** An export run that remembers, between runs, the heads it logged (so only moved ones are logged again). */
export function auditHeadExporter(ctx: AppContext): () => Promise<AuditHeadsSummary> {
  const logged = new Map<string, number>();
  return async () => {
    const digest = createHash('sha256');
    const summary: AuditHeadsSummary = { chains: 0, entries: 0, digest: '', logged: 0 };
    let after: string | null = null;
    for (;;) {
      const heads = await ctx.store.read((db) => listChainHeads(db, after, PAGE));
      for (const head of heads) {
        digest.update(`${head.accountId} ${head.seq} ${head.hash}\n`);
        summary.chains++;
        summary.entries += head.seq;
        if (logged.get(head.accountId) === head.seq) continue;
        logged.set(head.accountId, head.seq);
        summary.logged++;
        ctx.log.info({ auditHead: { accountId: head.accountId, seq: head.seq, hash: head.hash } }, 'audit chain head');
      }
      if (heads.length < PAGE) break;
      after = heads.at(-1)!.accountId;
    }
    summary.digest = digest.digest('hex');
    ctx.log.info({ auditHeads: { chains: summary.chains, entries: summary.entries, digest: summary.digest } }, 'audit chain heads');
    ctx.metrics?.auditHeads(summary);
    return summary;
  };
}
