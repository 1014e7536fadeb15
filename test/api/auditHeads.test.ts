/**
 * The audit chains' heads exported for the operator to keep outside the database (what catches a
 * rollback of the whole database, which `audit verify` cannot): each export logs every head that
 * moved since the one before, then the number of chains, the sum of their seqs and a digest over
 * every head; the metrics carry the same numbers.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditHeadExporter } from '../../src/services/auditHeads.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

const lines: Array<Record<string, unknown>> = [];
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    env: { METRICS_PORT: '0', LOG_LEVEL: 'info' },
    logDestination: { write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
});
afterAll(() => app?.close());

async function headsInDatabase(): Promise<Array<{ account_id: string; last_seq: number; last_hash: string }>> {
  const rows = await app.ctx.store.read((db) => db.all<{ account_id: string; last_seq: number; last_hash: string }>('SELECT account_id, last_seq, last_hash FROM audit_chains ORDER BY account_id'));
  return rows.map((r) => ({ ...r, last_seq: Number(r.last_seq) }));
}

describe('the export of the audit chains\' heads', () => {
  it('logs each moved head and a summary, and sets the metrics to the same numbers', async () => {
    const account = await app.newAccount('Exported Lending');
    const run = auditHeadExporter(app.ctx);
    lines.length = 0;
    const first = await run();
    const heads = await headsInDatabase();
    const digest = createHash('sha256').update(heads.map((h) => `${h.account_id} ${h.last_seq} ${h.last_hash}\n`).join('')).digest('hex');
    expect(first).toEqual({ chains: heads.length, entries: heads.reduce((n, h) => n + h.last_seq, 0), digest, logged: heads.length });
    const mine = heads.find((h) => h.account_id === account.accountId)!;
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'audit chain head', auditHead: { accountId: account.accountId, seq: mine.last_seq, hash: mine.last_hash } }));
    expect(lines.at(-1)).toMatchObject({ msg: 'audit chain heads', auditHeads: { chains: first.chains, entries: first.entries, digest } });

    const metrics = await (await fetch(app.metricsUrl!)).text();
    expect(metrics).toContain(`mos_audit_chains ${first.chains}\n`);
    expect(metrics).toContain(`mos_audit_head_seq_sum ${first.entries}\n`);
    expect(metrics).toContain(`mos_audit_heads_digest ${Number.parseInt(digest.slice(0, 12), 16)}\n`);

    // Nothing moved: no head logged again. One change: that head alone.
    lines.length = 0;
    expect(await run()).toMatchObject({ digest, logged: 0 });
    await account.client.POST('/v1/api-keys', { body: { name: 'One more', role: 'member' } });
    lines.length = 0;
    const third = await run();
    expect(third).toMatchObject({ logged: 1, entries: first.entries + 1 });
    expect(third.digest).not.toBe(digest);
    expect(lines.filter((l) => l.msg === 'audit chain head')).toEqual([expect.objectContaining({ auditHead: expect.objectContaining({ accountId: account.accountId, seq: mine.last_seq + 1 }) })]);
  });
});
