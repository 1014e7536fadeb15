/**
 * The request log lenders read: every /v1 request a key of an account made, recorded by the edge
 * after the answer into a bounded in-memory buffer and written in batches by background work, so
 * that recording adds no write to any request's path. Listing, one entry by request id, and the
 * retention sweep (REQUEST_LOG_RETENTION_DAYS).
 *
 * What one client can make the log hold is bounded: an entry keeps the first REQUEST_LOG_PATH_KEPT
 * characters of its path (and the whole path's length), a long problem body its strings' first
 * characters, and an environment stores at most REQUEST_LOG_ENTRIES_PER_MINUTE entries a minute
 * (src/domain/limits/requestLogBudget.ts; per instance), the rest counted on the minute's marker.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { RequestLogBudget } from '../domain/limits/requestLogBudget.ts';
import { fail } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Page, PageRequest } from '../store/pagination.ts';
import {
  findRequestLog,
  insertRequestLogBatch,
  keyNames,
  listRequestLogs as listRequestLogRecords,
  pruneRequestLogsBefore,
  REQUEST_LOG_BATCH_ENTRIES,
  type RequestLogEntry,
  type RequestLogRecord,
} from '../store/requestLogs.ts';
import { createdRangeOrRefuse } from './createdRange.ts';

// The cursor's form is the store's (an entry's id): the edge checks it through here.
export { isRequestLogEntryId } from '../store/requestLogs.ts';

export type RequestLog = components['schemas']['RequestLog'];
type Problem = components['schemas']['Problem'];

const DAY_MS = 24 * 3_600_000;

/** Entries the buffer holds at most (about 10 MB); when it is full the oldest REQUEST_LOG_FLUSH_BATCH are dropped (and counted). */
export const REQUEST_LOG_BUFFER_LIMIT = 50_000;
/**
 * A flush is started as soon as this many entries wait: each flush is a transaction and, on the
 * embedded engine, a durable journal write, so under load fewer and larger ones cost less per
 * request (a flush of 500 cost 2 µs of a quote's 60, issue 28's bench).
 */
export const REQUEST_LOG_FLUSH_BATCH = 2_000;
/** And at least this often while any wait. */
const FLUSH_INTERVAL_MS = 1_000;
/**
 * Entries one environment stores a minute, on each instance: ten requests a second on average, far
 * above what the dashboard's or a partner's reading needs, while a flood from one key stays a few
 * hundred kilobytes a minute. Requests past it (429s included, like any other) are counted on the
 * minute's marker.
 */
export const REQUEST_LOG_ENTRIES_PER_MINUTE = 600;
/** Characters of a path an entry keeps (the contract's bound for `path`); `pathLength` says how long it was. */
export const REQUEST_LOG_PATH_KEPT = 512;
/** A problem body longer than this is kept with each of its strings cut to REQUEST_LOG_PATH_KEPT characters. */
const PROBLEM_KEPT = 2_048;

/** The entry with its path, and a long problem's strings (its `instance` is the path), cut to their bounds. */
export function boundedEntry(entry: RequestLogEntry): RequestLogEntry {
  const long = entry.path.length > REQUEST_LOG_PATH_KEPT;
  const problem = entry.problem !== null && entry.problem.length > PROBLEM_KEPT ? boundedProblem(entry.problem) : entry.problem;
  if (!long && problem === entry.problem) return entry;
  return { ...entry, path: long ? cut(entry.path) : entry.path, problem };
}

/** The first characters of a text, without a percent-escape cut in two (a path stays a URI reference). */
const cut = (text: string) => text.slice(0, REQUEST_LOG_PATH_KEPT).replace(/%[0-9A-Fa-f]?$/, '');

/** The problem with its long strings cut; a body that is not JSON (none is, but this runs after the answer, where nothing may throw) is not kept. */
function boundedProblem(text: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const shorten = (value: unknown): unknown => {
    if (typeof value === 'string') return value.length > REQUEST_LOG_PATH_KEPT ? cut(value) : value;
    if (Array.isArray(value)) return value.map(shorten);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]));
    return value;
  };
  return JSON.stringify(shorten(parsed));
}

export interface RequestLogRecorder {
  /** Takes one entry: no I/O, no await (the edge calls it after answering). */
  record(entry: RequestLogEntry): void;
  /** Writes every entry taken so far (tests, and shutdown). */
  flush(): Promise<void>;
  /** Entries dropped because the buffer was full, since start. */
  readonly dropped: number;
  /** Stops the timer and writes what is left: called on shutdown before the store closes. */
  stop(): Promise<void>;
}

/**
 * The recorder the app wires behind its edge. Bounded memory: at most REQUEST_LOG_BUFFER_LIMIT
 * entries wait; past that the oldest go, counted, with a warning per flush that saw drops (the
 * store is slower than the traffic, or failing). A failed flush keeps its entries for the next.
 */
export function requestLogRecorder(ctx: AppContext, options: { entriesPerMinute?: number } = {}): RequestLogRecorder {
  const budget = new RequestLogBudget<RequestLogEntry>(options.entriesPerMinute ?? REQUEST_LOG_ENTRIES_PER_MINUTE);
  let buffer: RequestLogEntry[] = [];
  let dropped = 0;
  let droppedSinceWarning = 0;
  let writing: Promise<void> = Promise.resolve();
  let scheduled = false;
  let stopped = false;

  const writeOnce = async (): Promise<void> => {
    if (droppedSinceWarning > 0) {
      ctx.log.warn({ dropped: droppedSinceWarning, droppedTotal: dropped }, 'request log buffer full: oldest entries dropped');
      droppedSinceWarning = 0;
    }
    while (buffer.length > 0) {
      const batch = buffer.splice(0, REQUEST_LOG_FLUSH_BATCH);
      try {
        await writeRequestLogs(ctx, batch);
      } catch (err) {
        // Put them back in front, within the bound, and try again on the next flush.
        const room = Math.max(0, REQUEST_LOG_BUFFER_LIMIT - buffer.length);
        const kept = batch.slice(Math.max(0, batch.length - room));
        // Counted for the next flush's warning too: lost here, they would otherwise go unreported.
        dropped += batch.length - kept.length;
        droppedSinceWarning += batch.length - kept.length;
        buffer = [...kept, ...buffer];
        ctx.log.warn({ err, waiting: buffer.length }, 'request log flush failed; retrying later');
        return;
      }
    }
  };
  const keep = (entry: RequestLogEntry): void => {
    if (buffer.length >= REQUEST_LOG_BUFFER_LIMIT) {
      // The oldest batch's worth at once: dropping one per entry moved the whole buffer each time.
      const drop = Math.min(REQUEST_LOG_FLUSH_BATCH, buffer.length);
      buffer.splice(0, drop);
      dropped += drop;
      droppedSinceWarning += drop;
    }
    buffer.push(entry);
    if (buffer.length >= REQUEST_LOG_FLUSH_BATCH && !scheduled) {
      scheduled = true;
      setImmediate(() => void flush());
    }
  };
  // The markers of the minutes over by `now` (every minute's, at shutdown), into the buffer.
  const closeMinutes = (now: number): void => {
    for (const { entry, omitted } of budget.close(now)) keep({ ...entry, omitted });
  };
  const flush = (): Promise<void> => {
    scheduled = false;
    closeMinutes(ctx.clock.now().getTime());
    writing = writing.then(writeOnce);
    return writing;
  };
  const timer = setInterval(() => {
    closeMinutes(ctx.clock.now().getTime());
    if (buffer.length > 0 && !scheduled) void flush();
  }, FLUSH_INTERVAL_MS);
  timer.unref();

  return {
    record(recorded) {
      if (stopped) return;
      const entry = boundedEntry(recorded);
      const { store, closed } = budget.take(entry);
      if (closed) keep({ ...closed.entry, omitted: closed.omitted });
      if (store) keep(entry);
    },
    flush,
    get dropped() {
      return dropped;
    },
    async stop() {
      clearInterval(timer);
      closeMinutes(Infinity);
      await flush();
      stopped = true;
    },
  };
}

/** Writes the entries (never none: the buffer's batches) in one transaction, a batch row per environment (per REQUEST_LOG_BATCH_ENTRIES), with each key's name as it is now. */
async function writeRequestLogs(ctx: AppContext, entries: readonly RequestLogEntry[]): Promise<void> {
  const byEnvironment = new Map<string, RequestLogEntry[]>();
  for (const entry of entries) {
    const same = byEnvironment.get(entry.accountId);
    if (same) same.push(entry);
    else byEnvironment.set(entry.accountId, [entry]);
  }
  await ctx.store.transaction(async (tx) => {
    const names = await keyNames(tx, [...new Set(entries.map((e) => e.keyId))]);
    for (const [accountId, recorded] of byEnvironment) {
      for (let start = 0; start < recorded.length; start += REQUEST_LOG_BATCH_ENTRIES) {
        // The batch's dictionary takes the names of its own entries' keys only.
        await insertRequestLogBatch(tx, { id: newId('rlg'), accountId, entries: recorded.slice(start, start + REQUEST_LOG_BATCH_ENTRIES), keyNames: names });
      }
    }
  });
}

/** The oldest moment whose entries are still kept at `now`. */
function retentionCutoff(ctx: AppContext): string {
  return new Date(ctx.clock.now().getTime() - ctx.config.requestLogs.retentionDays * DAY_MS).toISOString();
}

function toRequestLog(r: RequestLogRecord): RequestLog {
  return {
    requestId: r.requestId,
    clientRequestId: r.clientRequestId,
    createdAt: r.createdAt,
    keyId: r.keyId,
    keyName: r.keyName,
    method: r.method,
    operationId: r.operationId,
    // Entries written before paths were bounded are cut as they are read.
    path: r.path.length > REQUEST_LOG_PATH_KEPT ? cut(r.path) : r.path,
    pathLength: r.pathLength,
    status: r.status,
    latencyMs: r.latencyMs,
    clientAddress: r.clientAddress,
    idempotencyKey: r.idempotencyKey,
    idempotentReplayed: r.idempotentReplayed,
    // The text as it was kept (as sent, but for a long one's strings); parsed, it serialises back to the same document.
    problem: r.problem === null ? null : (JSON.parse(r.problem.length > PROBLEM_KEPT ? (boundedProblem(r.problem) ?? 'null') : r.problem) as Problem | null),
    omitted: r.omitted,
    livemode: isLivemode(r.accountId),
  };
}

type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

export interface RequestLogFilter {
  status?: number | undefined;
  statusClass?: StatusClass | undefined;
  keyId?: string | undefined;
  operationId?: string | undefined;
  clientRequestId?: string | undefined;
  createdFrom?: string | undefined;
  createdTo?: string | undefined;
}

/** The environment's request log, newest first, within the retention period. */
export async function listRequestLogs(ctx: AppContext, accountId: string, filter: RequestLogFilter, page: PageRequest): Promise<Page<RequestLog>> {
  const { createdFrom, createdTo } = createdRangeOrRefuse(filter);
  const found = await ctx.store.read((db) =>
    listRequestLogRecords(
      db,
      {
        accountId,
        keptSince: retentionCutoff(ctx),
        status: filter.status,
        statusClass: filter.statusClass === undefined ? undefined : (Number(filter.statusClass[0]) as 2 | 3 | 4 | 5),
        keyId: filter.keyId,
        operationId: filter.operationId,
        clientRequestId: filter.clientRequestId,
        createdFrom,
        createdTo,
      },
      page,
    ),
  );
  return { ...found, items: found.items.map(toRequestLog) };
}

/** The environment's newest entry for a request id; 404 when there is none (another account's, not yet written, or past retention). */
export async function getRequestLog(ctx: AppContext, accountId: string, requestId: string): Promise<RequestLog> {
  const found = await ctx.store.read((db) => findRequestLog(db, accountId, requestId, retentionCutoff(ctx)));
  if (!found) {
    throw fail.notFound(
      `There is no request ${requestId} in your request log (entries appear about a second after the answer and are kept for ${ctx.config.requestLogs.retentionDays} days).`,
    );
  }
  return toRequestLog(found);
}

/** How often entries past retention are deleted. */
export const REQUEST_LOG_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Batch rows (up to REQUEST_LOG_BATCH_ENTRIES entries each) deleted per transaction, so the store is never held for long. */
const PRUNE_BATCH = 20;

/** One run of the retention sweep, exactly as the background task runs it: how many entries it deleted. */
export async function pruneExpiredRequestLogs(ctx: AppContext): Promise<number> {
  const cutoff = retentionCutoff(ctx);
  let deleted = 0;
  for (;;) {
    const { entries, more } = await ctx.store.transaction((tx) => pruneRequestLogsBefore(tx, cutoff, PRUNE_BATCH));
    deleted += entries;
    if (!more) return deleted;
  }
}
