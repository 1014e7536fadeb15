/**
 * A CSV export on PostgreSQL with a parallel worker (DATABASE_EXPORT_WORKERS, src/store/postgres/copyOut.ts)
 * writes the same bytes, in the same order, as one backend alone: the lines are computed in the
 * workers and gathered in id order (Gather Merge).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInCsvLayout } from '../../src/domain/exports/csv.ts';
import { EXPORT_FIELDS } from '../../src/domain/exports/fields.ts';
import { newId } from '../../src/ids.ts';
import { insertAccount } from '../../src/store/accounts.ts';
import { decodeSecretsKey, SecretKeyring } from '../../src/store/core/sealing.ts';
import { exportCsvLines } from '../../src/store/exportCsvLines.ts';
import type { ExportQuery } from '../../src/store/exportRecords.ts';
import { openPgStore, type PgStore } from '../../src/store/postgres/pgStore.ts';
import type { Store } from '../../src/store/store.ts';
import { testDatabase, withDatabaseClient, type TempDatabase } from '../helpers/engine.ts';

const sealer = new SecretKeyring(decodeSecretsKey('BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=', 'SECRETS_KEY'));
const T0 = '2026-11-27T09:00:00.000Z';
const RECORDS = 30_000;
let database: TempDatabase;
const stores: PgStore[] = [];
let query: ExportQuery;

const layout = builtInCsvLayout(EXPORT_FIELDS);

async function open(exportWorkers: number): Promise<PgStore> {
  const store = await openPgStore({ url: database.url, poolMax: 2, sealer, exportWorkers });
  stores.push(store);
  return store;
}

const withClient = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => withDatabaseClient(database.url, fn);

/** Parallel workers running in the test's database now. */
const parallelWorkers = () =>
  withClient(async (client) => {
    const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'parallel worker'", [database.name]);
    return rows[0]!.n;
  });

/**
 * The export's lines through the store's COPY, how many rows it counted, and the parallel workers
 * seen after the first piece (the export then waits for its reader, several MiB short of its end).
 */
async function exported(store: Store): Promise<{ text: string; rows: number; workers: number }> {
  const parts: Buffer[] = [];
  let rows = 0;
  let workers = -1;
  for await (const piece of exportCsvLines(store, query, layout)!) {
    parts.push(piece.bytes);
    rows += piece.rows;
    if (workers < 0) workers = await parallelWorkers();
  }
  return { text: Buffer.concat(parts).toString('utf8'), rows, workers };
}

beforeAll(async () => {
  database = await testDatabase();
  const accountId = newId('acc');
  const first = await open(0);
  await first.transaction((tx) => insertAccount(tx, { accountId, name: 'Parallel Lending', email: 'ops@parallel.test', currency: 'USD', createdAt: T0 }));
  // Test data only: applications with ids that sort as real ones, names that need quoting, and a
  // bank verification (two for some, the later one counting) on every seventh.
  await withClient(async (client) => {
    await client.query(
      `INSERT INTO applications (id, account_id, status, applicant_name, applicant_email, amount_cents, annual_income_cents,
         monthly_debts_cents, credit_score, term_years, property_value_cents, quote_id, decision_json, submitted_at, decided_at,
         withdrawn_at, created_at, updated_at)
       SELECT 'mtg-' || lpad(n::text, 26, '0'), $1,
         CASE n % 4 WHEN 0 THEN 'approved' WHEN 1 THEN 'draft' WHEN 2 THEN 'declined' ELSE 'withdrawn' END,
         CASE WHEN n % 9 = 0 THEN 'Doe, "Jay" ' || n ELSE 'Applicant ' || n END, 'a' || n || '@example.test',
         1000000 + n * 7919, 6000000 + n, n % 500, 580 + n % 270, 10 + n % 31, 20000000 + n * 3, NULL, NULL,
         $2::timestamptz + n * interval '1 second', CASE WHEN n % 4 <> 1 THEN $2::timestamptz + n * interval '1.5 seconds' END,
         CASE WHEN n % 4 = 3 THEN $2::timestamptz + n * interval '2 seconds' END, $2::timestamptz + n * interval '1 millisecond', $2
       FROM generate_series(1, $3::int) AS n`,
      [accountId, T0, RECORDS],
    );
    await client.query(`INSERT INTO bank_partners (id, name, connector, base_url, credential_encrypted, restricted, disabled_at, created_at, updated_at)
       VALUES ('bnk-00000000000000000000000001', 'Parallel Sandbox Bank', 'sandbox', NULL, NULL, 0, NULL, $1, $1)`, [T0]);
    await client.query(
      `INSERT INTO bank_verifications (id, account_id, mortgage_id, partner_id, verified, account_mask, account_number_hash,
         linked_account_hash, name_score, name_outcome, failed_checks, checked_at)
       SELECT 'bvf-' || lpad((n * 10 + k)::text, 26, '0'), $1, 'mtg-' || lpad(n::text, 26, '0'), 'bnk-00000000000000000000000001',
         (n + k) % 2, lpad((n % 10000)::text, 4, '0'), 'h', 'h', '0.950', 'match', '[]', $2::timestamptz + (n + k) * interval '1 minute'
       FROM generate_series(7, $3::int, 7) AS n, generate_series(0, CASE WHEN n % 2 = 0 THEN 1 ELSE 0 END) AS k`,
      [accountId, T0, RECORDS],
    );
    await client.query('ANALYZE');
    // The plan a million records get: the applications read in parallel, the verifications (a
    // tenth of them) by each process whole. Priced at nothing and with the verifications' scan kept
    // whole, a few thousand rows get it too (else the planner parallelises that small scan instead).
    await client.query('ALTER TABLE bank_verifications SET (parallel_workers = 0)');
    for (const setting of ['parallel_setup_cost = 0', 'parallel_tuple_cost = 0', 'min_parallel_table_scan_size = 0', 'min_parallel_index_scan_size = 0']) {
      await client.query(`ALTER DATABASE ${database.name} SET ${setting}`);
    }
  });
  query = { accountId, currency: 'USD', upToId: `mtg-${String(RECORDS).padStart(26, '0')}` };
}, 60_000);

afterAll(async () => {
  for (const store of stores) await store.close();
  await database?.drop();
});

describe('CSV export with a parallel worker on PostgreSQL', () => {
  it('is planned with a worker that computes the lines, gathered in id order', async () => {
    let select = '';
    const capture = { copyText: async function* (sql: string) { select = sql; } } as unknown as Store;
    await exportCsvLines(capture, query, layout)!.next();
    const plan = await withClient(async (client) => {
      await client.query('SET max_parallel_workers_per_gather = 1');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${select}`);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/^Gather Merge/);
    expect(plan).toMatch(/Workers Launched: 1/);
  });

  it('writes the same bytes as one backend alone, every record once, in id order', async () => {
    const alone = await exported(await open(0));
    const parallel = await exported(await open(1));
    expect(parallel.workers).toBe(1);
    expect(alone.workers).toBe(0);
    expect(parallel.rows).toBe(RECORDS);
    expect(alone.rows).toBe(RECORDS);
    expect(parallel.text).toBe(alone.text);
    const ids = parallel.text.split('\r\n').filter((line) => line !== '').map((line) => line.slice(0, 30));
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(RECORDS);
  });
});
