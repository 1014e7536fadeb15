/**
 * The request log, stored as batches: one row per environment per flush (up to
 * REQUEST_LOG_BATCH_ENTRIES entries), the entries a compact JSON array in the row (see StoredEntry),
 * beside the sets of statuses, keys and operations the batch holds. A row per request cost the
 * embedded engine about a third of a quote's own work (four b-trees, fifteen bound values and a
 * journal record each, issue 28's bench); a batch costs one row for hundreds of requests, and the
 * sets of statuses, keys and operations (and, for a request id, the entries' text itself) let a
 * filtered read skip the batches that cannot match without decoding them.
 *
 * An entry's id is its batch's id (a time-ordered `rlg_…` id made at the flush) and its place in
 * the batch, four digits: ids sort as the entries were recorded, so the newest-first keyset paging
 * of every other list applies (a cursor names an entry; the batches at or before it are read).
 */
import { isId } from '../ids.ts';
import { narrowed, toPage, type Page, type PageRequest } from './pagination.ts';
import { forUpdate, type SqlExecutor, type Tx } from './store.ts';

export interface RequestLogRecord {
  /** The entry's id: its batch's id, a dot and its place in the batch (`rlg_….0042`). */
  id: string;
  /** The environment the key acts in (the account's id, or its test environment's). */
  accountId: string;
  /** The service's id for the request (its X-Request-Id response header). */
  requestId: string;
  /** The X-Request-Id the caller sent, when it was sane; null otherwise. */
  clientRequestId: string | null;
  keyId: string;
  keyName: string | null;
  method: string;
  operationId: string;
  /** The path as kept: its first characters only, when it was long (see pathLength). */
  path: string;
  /** The whole path's length in characters. */
  pathLength: number;
  status: number;
  latencyMs: number;
  clientAddress: string;
  idempotencyKey: string | null;
  idempotentReplayed: boolean;
  /** The problem+json text as kept, for 4xx and 5xx answers; null otherwise. */
  problem: string | null;
  /** On a minute's marker: the requests past that minute's budget (this one included), and when the first arrived. */
  omitted: { count: number; firstAt: string } | null;
  createdAt: string;
}

/** What the edge records of a request after answering it: the entry before its batch is known. */
export type RequestLogEntry = Omit<RequestLogRecord, 'id' | 'keyName' | 'createdAt' | 'omitted'> & {
  /** When the request arrived, in milliseconds since the epoch. */
  arrivedAt: number;
  /** Set on a minute's marker only (times in milliseconds since the epoch). */
  omitted?: { count: number; firstAt: number } | undefined;
};

/** Entries one batch row holds at most: its id's four digits, and a row a read decodes in about a millisecond. */
export const REQUEST_LOG_BATCH_ENTRIES = 1000;

export interface RequestLogBatch {
  /** A new time-ordered id (`rlg_…`), later than every batch this process wrote before. */
  id: string;
  accountId: string;
  /** Entries of this environment in the order they were recorded; at most REQUEST_LOG_BATCH_ENTRIES. */
  entries: readonly RequestLogEntry[];
  /** Key names now, by key id (others' may be there too: only the entries' keys are kept; a key that is gone has none). */
  keyNames: ReadonlyMap<string, string>;
}

/**
 * An entry as the batch's JSON holds it: positions, not keys, with the values most entries share
 * (key, method and operation, path, address) as places in the batch's dictionary and the time as
 * milliseconds after the batch's first: under half the bytes of the plain entry, and every byte
 * is paid for again by SQLite, the journal and its checksum.
 */
type StoredEntry = [
  requestId: string,
  key: number,
  operation: number,
  path: number,
  status: number,
  latencyMs: number,
  address: number,
  idempotencyKey: string | null,
  idempotentReplayed: 0 | 1,
  problem: string | null,
  afterFirstMs: number,
  // Appended later, and only as far as an entry has one (trailing nulls are left out, so an
  // ordinary entry costs no more bytes than before, and rows written before read as nulls):
  clientRequestId?: string | null,
  /** The whole path's length, when the path was kept shortened. */
  pathLength?: number | null,
  omittedCount?: number | null,
  omittedFirstAfterFirstMs?: number | null,
];

/** The batch's shared values: keys (id and name), operations (method and operationId), paths, addresses, and the first entry's time. */
type StoredDictionary = [keys: Array<[string, string | null]>, operations: Array<[string, string]>, paths: string[], addresses: string[], firstAt: number];

/** Values in order of first use, each with its place. */
class Places<K> {
  readonly values: K[] = [];
  private readonly places = new Map<string, number>();
  placeOf(key: string, value: () => K): number {
    let place = this.places.get(key);
    if (place === undefined) {
      place = this.values.length;
      this.places.set(key, place);
      this.values.push(value());
    }
    return place;
  }
}

/** A set as a batch row holds it, `|a|b|`, so that `LIKE '%|a|%'` asks whether it holds `a` (on either engine). */
const setText = (values: Iterable<string | number>): string => `|${[...new Set(values)].join('|')}|`;

const ISO = (ms: number) => new Date(ms).toISOString();

/** Writes one batch: a single row however many entries it holds. */
export async function insertRequestLogBatch(tx: Tx, batch: RequestLogBatch): Promise<void> {
  const { entries } = batch;
  if (entries.length === 0) return;
  if (entries.length > REQUEST_LOG_BATCH_ENTRIES) throw new Error(`a request log batch holds at most ${REQUEST_LOG_BATCH_ENTRIES} entries`);
  let firstAt = Infinity;
  let lastAt = -Infinity;
  for (const e of entries) {
    firstAt = Math.min(firstAt, e.arrivedAt);
    lastAt = Math.max(lastAt, e.arrivedAt);
  }
  const keys = new Places<[string, string | null]>();
  const operations = new Places<[string, string]>();
  const paths = new Places<string>();
  const addresses = new Places<string>();
  const statuses = new Set<number>();
  const stored: StoredEntry[] = [];
  for (const e of entries) {
    statuses.add(e.status);
    const row: StoredEntry = [
      e.requestId,
      keys.placeOf(e.keyId, () => [e.keyId, batch.keyNames.get(e.keyId) ?? null]),
      operations.placeOf(`${e.method} ${e.operationId}`, () => [e.method, e.operationId]),
      paths.placeOf(e.path, () => e.path),
      e.status,
      e.latencyMs,
      addresses.placeOf(e.clientAddress, () => e.clientAddress),
      e.idempotencyKey,
      e.idempotentReplayed ? 1 : 0,
      e.problem,
      e.arrivedAt - firstAt,
      e.clientRequestId,
      e.pathLength === e.path.length ? null : e.pathLength,
      e.omitted ? e.omitted.count : null,
      e.omitted ? e.omitted.firstAt - firstAt : null,
    ];
    while (row.length > 11 && row.at(-1) === null) row.pop();
    stored.push(row);
  }
  const dictionary: StoredDictionary = [keys.values, operations.values, paths.values, addresses.values, firstAt];
  await tx.run(
    `INSERT INTO request_log_batches (id, account_id, first_at, last_at, entry_count, statuses, key_ids, operation_ids, dictionary, entries)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      batch.id,
      batch.accountId,
      ISO(firstAt),
      ISO(lastAt),
      entries.length,
      setText(statuses),
      setText(keys.values.map(([keyId]) => keyId)),
      setText(operations.values.map(([, operationId]) => operationId)),
      JSON.stringify(dictionary),
      JSON.stringify(stored),
    ],
  );
}

/** The names of these keys now, by key id (keys that are gone are left out). */
export async function keyNames(db: SqlExecutor, keyIds: readonly string[]): Promise<Map<string, string>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db.all<{ id: string; name: string }>(`SELECT id, name FROM api_keys WHERE id IN (${keyIds.map(() => '?').join(', ')})`, [...keyIds]);
  return new Map(rows.map((r) => [r.id, r.name]));
}

export interface RequestLogQuery {
  accountId: string;
  /** The retention cutoff: older entries are not shown even before they are pruned (ISO 8601 UTC). */
  keptSince: string;
  status?: number | undefined;
  /** The first digit of the statuses to keep (4: 400 to 499). */
  statusClass?: 2 | 3 | 4 | 5 | undefined;
  keyId?: string | undefined;
  operationId?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
  requestId?: string | undefined;
  clientRequestId?: string | undefined;
}

interface BatchRow {
  id: string;
  dictionary: string;
  entries: string;
}

/** A batch's entry as the filters read it: its dictionary's values in place. */
interface ReadEntry {
  requestId: string;
  clientRequestId: string | null;
  keyId: string;
  keyName: string | null;
  method: string;
  operationId: string;
  path: string;
  pathLength: number;
  status: number;
  latencyMs: number;
  clientAddress: string;
  idempotencyKey: string | null;
  idempotentReplayed: boolean;
  problem: string | null;
  omitted: { count: number; firstAt: string } | null;
  arrivedAt: number;
}

/** A batch's entries, each made a ReadEntry only when a page reaches it (a page of 20 needs 20 of the 1,000). */
function decodeBatch(row: BatchRow): { count: number; entry(place: number): ReadEntry } {
  const [keys, operations, paths, addresses, firstAt] = JSON.parse(row.dictionary) as StoredDictionary;
  const entries = JSON.parse(row.entries) as StoredEntry[];
  return {
    count: entries.length,
    entry(place) {
      const e = entries[place]!;
      const path = paths[e[3]]!;
      return {
        requestId: e[0],
        clientRequestId: e[11] ?? null,
        keyId: keys[e[1]]![0],
        keyName: keys[e[1]]![1],
        method: operations[e[2]]![0],
        operationId: operations[e[2]]![1],
        path,
        pathLength: e[12] ?? path.length,
        status: e[4],
        latencyMs: e[5],
        clientAddress: addresses[e[6]]!,
        idempotencyKey: e[7],
        idempotentReplayed: e[8] === 1,
        problem: e[9],
        omitted: typeof e[13] === 'number' ? { count: e[13], firstAt: ISO(firstAt + (e[14] ?? 0)) } : null,
        arrivedAt: firstAt + e[10],
      };
    },
  };
}

/** Batch rows read per statement while a page fills: most pages need one or two. */
const BATCHES_PER_READ = 4;

/** An entry's id: its batch's id, a dot and its place in four digits (REQUEST_LOG_BATCH_ENTRIES fits), so that ids sort as entries were recorded. */
const entryId = (batchId: string, place: number) => `${batchId}.${String(place).padStart(4, '0')}`;

/** Whether `value` is an entry's id as entryId makes them (what a cursor must carry). */
export function isRequestLogEntryId(value: string): boolean {
  return /\.\d{4}$/.test(value) && isId('rlg', value.slice(0, -5));
}

/** The batch part of an entry id (a cursor); an id without one is compared whole. */
const batchIdOf = (id: string) => {
  const dot = id.lastIndexOf('.');
  return dot < 0 ? id : id.slice(0, dot);
};

/**
 * The entries of the environment that `query` selects, newest first, after `page.afterId`: the
 * batch rows that may hold one (their sets and times say so) are read newest first, a few at a
 * time, and decoded until the page (and one more, to know a next page exists) is full.
 */
export async function listRequestLogs(db: SqlExecutor, query: RequestLogQuery, page: PageRequest): Promise<Page<RequestLogRecord>> {
  const keptSince = Date.parse(query.keptSince);
  const from = query.createdFrom === undefined ? -Infinity : Date.parse(query.createdFrom);
  const to = query.createdTo === undefined ? Infinity : Date.parse(query.createdTo);
  const classDigit = query.statusClass === undefined ? undefined : String(query.statusClass);
  const matches = (e: ReadEntry) =>
    e.arrivedAt >= keptSince &&
    e.arrivedAt >= from &&
    e.arrivedAt < to &&
    (query.status === undefined || e.status === query.status) &&
    (classDigit === undefined || String(e.status)[0] === classDigit) &&
    (query.keyId === undefined || e.keyId === query.keyId) &&
    (query.operationId === undefined || e.operationId === query.operationId) &&
    (query.requestId === undefined || e.requestId === query.requestId) &&
    (query.clientRequestId === undefined || e.clientRequestId === query.clientRequestId);

  // A batch whose set lacks the value holds no entry to show ('_' and '%' in a value only widen the
  // match); a request id (the service's or the client's) is looked for as a JSON string in the
  // entries (neither holds a quote or backslash).
  const set = (value: string | number | undefined) => (value === undefined ? undefined : `%|${value}|%`);
  const { sql, values: params } = narrowed('SELECT id, dictionary, entries FROM request_log_batches WHERE account_id = ? AND last_at >= ?', [query.accountId, query.keptSince], [
    ['entries LIKE ?', query.requestId === undefined ? undefined : `%${JSON.stringify(query.requestId)}%`],
    ['entries LIKE ?', query.clientRequestId === undefined ? undefined : `%${JSON.stringify(query.clientRequestId)}%`],
    ['statuses LIKE ?', set(query.status)],
    ['statuses LIKE ?', set(classDigit === undefined ? undefined : `${classDigit}__`)],
    ['key_ids LIKE ?', set(query.keyId)],
    ['operation_ids LIKE ?', set(query.operationId)],
    ['last_at >= ?', query.createdFrom],
    ['first_at < ?', query.createdTo],
  ]);

  const found: RequestLogRecord[] = [];
  let before = page.afterId === undefined ? undefined : batchIdOf(page.afterId);
  let inclusive = true; // the cursor's own batch holds entries older than the cursor
  while (found.length <= page.limit) {
    const bound = before === undefined ? '' : ` AND id ${inclusive ? '<=' : '<'} ?`;
    const rows = await db.all<BatchRow>(`${sql}${bound} ORDER BY id DESC LIMIT ?`, [...params, ...(before === undefined ? [] : [before]), BATCHES_PER_READ]);
    for (const row of rows) {
      const batch = decodeBatch(row);
      for (let place = batch.count - 1; place >= 0 && found.length <= page.limit; place--) {
        const id = entryId(row.id, place);
        if (page.afterId !== undefined && id >= page.afterId) continue;
        const e = batch.entry(place);
        if (matches(e)) {
          const { arrivedAt, ...fields } = e;
          found.push({ id, accountId: query.accountId, ...fields, createdAt: ISO(arrivedAt) });
        }
      }
    }
    if (rows.length < BATCHES_PER_READ) break;
    before = rows.at(-1)!.id;
    inclusive = false;
  }
  return toPage(found, page.limit, (r) => r.id);
}

/** The newest entry of the environment with this request id still kept at `keptSince`. */
export async function findRequestLog(db: SqlExecutor, accountId: string, requestId: string, keptSince: string): Promise<RequestLogRecord | undefined> {
  const { items } = await listRequestLogs(db, { accountId, keptSince, requestId }, { limit: 1 });
  return items[0];
}

/**
 * Deletes up to `limit` batches whose every entry is older than `cutoff` and returns how many
 * entries they held, and whether more are left. On PostgreSQL, batches another instance is
 * pruning right now are skipped.
 */
export async function pruneRequestLogsBefore(tx: Tx, cutoff: string, limit: number): Promise<{ entries: number; more: boolean }> {
  const rows = await tx.all<{ id: string; entry_count: number }>(
    `SELECT id, entry_count FROM request_log_batches WHERE last_at < ? ORDER BY last_at LIMIT ?${forUpdate(tx, 'SKIP LOCKED')}`,
    [cutoff, limit],
  );
  if (rows.length === 0) return { entries: 0, more: false };
  const ids = rows.map((r) => r.id);
  await tx.run(`DELETE FROM request_log_batches WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
  return { entries: rows.reduce((sum, r) => sum + Number(r.entry_count), 0), more: rows.length === limit };
}
