/**
 * The audit log: every change a person or a key makes, recorded in a tamper-evident hash chain
 * per account environment (src/domain/audit/chain.ts), listed to admins, checked by the operator's
 * `audit verify`, and kept for AUDIT_RETENTION_DAYS.
 *
 * Recording: a use case calls `recordAudit(tx, ctx, {...})` inside the transaction of the change it
 * describes, as its LAST statement (so an entry exists exactly when the change committed, and the
 * chain's lock is held only for the commit, never while waiting for another lock). Attempts and
 * reads that change nothing (a failed sign-in, a download, an export) call `recordAuditNow`, which
 * records in a transaction of its own. Who and where come from `ctx.origin`, which the edge sets.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import {
  ChainVerifier,
  describeBreak,
  entryHash,
  type AuditActor,
  type AuditChange,
  type AuditEntry,
  type AuditEntryContent,
  type AuditOrigin,
  type AuditOutcome,
  type ChainBreak,
} from '../domain/audit/chain.ts';
import { describeAnchorBreak, type AnchorBreak } from '../domain/audit/anchors.ts';
import { recordedChange, type AuditAction } from '../domain/audit/entries.ts';
import { newId } from '../ids.ts';
import { findApiKeyById } from '../store/apiKeys.ts';
import { chainsWithoutHead, checkChainAnchors } from '../store/auditAnchors.ts';
import {
  appendEntry,
  chainEntries,
  chainsWithEntriesBefore,
  hasEntries,
  listChains,
  listEntries,
  lockChain,
  pruneChainBefore,
  readChain,
  type AuditQuery,
  type ChainState,
} from '../store/auditEvents.ts';
import type { Page, PageRequest } from '../store/pagination.ts';
import type { Tx } from '../store/store.ts';
import { createdRangeOrRefuse } from './createdRange.ts';

export type AuditEvent = components['schemas']['AuditEvent'];

/** The service itself: background work, and anything run without an origin. */
const SYSTEM_ORIGIN: AuditOrigin = { actor: { type: 'system', id: null, name: null }, clientAddress: null, userAgent: null, requestId: null };

/** The operator's command line. */
export const CLI_ORIGIN: AuditOrigin = { actor: { type: 'cli', id: null, name: null }, clientAddress: null, userAgent: null, requestId: null };

/** `ctx` as seen by the changes `origin` makes (prototype-linked: nothing of ctx is copied). */
export function withOrigin<C extends AppContext>(ctx: C, origin: AuditOrigin): C {
  return Object.create(ctx, { origin: { value: origin, enumerable: true } }) as C;
}

/** Who and where for a dashboard user: the user and the browser's request. */
export function userOrigin(user: { userId: string; email: string }, request: Omit<AuditOrigin, 'actor'>): AuditOrigin {
  return { actor: { type: 'user', id: user.userId, name: user.email }, ...request };
}

/** What a use case says of the change it records. */
export interface AuditRecord {
  /** The environment whose chain holds the entry: the records' owner id (live account id or `….test`). */
  accountId: string;
  action: AuditAction;
  target: { type: string; id: string | null };
  /** Default 'success'. */
  outcome?: AuditOutcome;
  /** Before and after, where there is a change; members named like secrets are redacted. */
  change?: Partial<AuditChange> | null;
  /** Who, when it is not `ctx.origin`'s actor (a sign-in: the user the email names). */
  actor?: AuditActor;
}

/** An API key actor's name, read in the same transaction (the edge knows only the key's id). */
async function namedActor(tx: Tx, actor: AuditActor): Promise<AuditActor> {
  if (actor.type !== 'apiKey' || actor.name !== null || actor.id === null) return actor;
  const key = await findApiKeyById(tx, actor.id);
  return { ...actor, name: key?.name ?? null };
}

/**
 * Appends an entry to the chain of `record.accountId` inside `tx`. Call it last in the
 * transaction of the change: it locks the chain until the commit.
 */
export async function recordAudit(tx: Tx, ctx: AppContext, record: AuditRecord): Promise<AuditEntry> {
  const origin = ctx.origin ?? SYSTEM_ORIGIN;
  const actor = await namedActor(tx, record.actor ?? origin.actor);
  const chain = await lockChain(tx, record.accountId);
  const now = ctx.clock.now();
  const content: AuditEntryContent = {
    auditEventId: newId('aud', now.getTime()),
    accountId: record.accountId,
    seq: chain.head.seq + 1,
    occurredAt: now.toISOString(),
    actor,
    action: record.action,
    target: record.target,
    outcome: record.outcome ?? 'success',
    clientAddress: origin.clientAddress,
    userAgent: origin.userAgent,
    requestId: origin.requestId,
    change: recordedChange(record.change),
  };
  // Hashed as it will read back: the change through JSON (no undefined members, no prototypes).
  const stored: AuditEntryContent = { ...content, change: content.change === null ? null : (JSON.parse(JSON.stringify(content.change)) as AuditChange) };
  const entry: AuditEntry = { ...stored, prevHash: chain.head.hash, hash: entryHash(stored, chain.head.hash) };
  await appendEntry(tx, entry, chain.head);
  return entry;
}

/** Records in a transaction of its own: for what changes nothing else (a failed sign-in, a download, an export run). */
export function recordAuditNow(ctx: AppContext, record: AuditRecord): Promise<AuditEntry> {
  return ctx.store.transaction((tx) => recordAudit(tx, ctx, record));
}

/** An entry as the API shows it. */
export function toAuditEvent(entry: AuditEntry): AuditEvent {
  return {
    auditEventId: entry.auditEventId,
    createdAt: entry.occurredAt,
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    outcome: entry.outcome,
    clientAddress: entry.clientAddress,
    userAgent: entry.userAgent,
    requestId: entry.requestId,
    change: entry.change as AuditEvent['change'],
    sequence: entry.seq,
    previousHash: entry.prevHash,
    hash: entry.hash,
    livemode: isLivemode(entry.accountId),
  };
}

/** What a reader may filter the log by: the store's query, within the caller's account. */
export type AuditFilter = Omit<AuditQuery, 'accountId'>;

/** The environment's entries, newest first; a bad time range is a 400. */
export async function listAuditEvents(ctx: AppContext, accountId: string, filter: AuditFilter, page: PageRequest): Promise<Page<AuditEvent>> {
  const { createdFrom, createdTo } = createdRangeOrRefuse(filter);
  const found = await ctx.store.read((db) => listEntries(db, { ...filter, accountId, createdFrom, createdTo }, page));
  return { ...found, items: found.items.map(toAuditEvent) };
}

/** Entries read per batch when checking or exporting. */
const VERIFY_BATCH = 500;

export interface ChainVerification {
  accountId: string;
  ok: boolean;
  entriesChecked: number;
  /** The first break, in the operator's words; absent when the chain holds. */
  firstBroken?: string;
  broken?: ChainBreak | AnchorBreak;
}

function brokenAt(accountId: string, entriesChecked: number, broken: ChainBreak | AnchorBreak): ChainVerification {
  const firstBroken = 'kind' in broken ? describeAnchorBreak(broken) : describeBreak(broken);
  return { accountId, ok: false, entriesChecked, firstBroken, broken };
}

/** A chain whose row was deleted from under its entries: its head is gone. */
const HEAD_ROW_MISSING: AnchorBreak = { reason: 'chain_row_missing', kind: 'head', seq: 0 };

/**
 * Checks one environment's chain: first the MACs of its head and pruning anchor (which a writer of
 * the database alone cannot make, src/domain/audit/anchors.ts), then its entries from the anchor to
 * the head as it was when the check began (entries appended meanwhile are past it), a batch at a
 * time. Retention may move the anchor during the walk (deleting entries not yet read): a break
 * found then is checked again from the new anchor.
 */
export async function verifyAuditChain(ctx: AppContext, accountId: string): Promise<ChainVerification> {
  for (let attempt = 1; ; attempt++) {
    const read = await ctx.store.read(async (db) => {
      const chain = await readChain(db, accountId);
      if (chain === null) return { chain, broken: (await hasEntries(db, accountId)) ? HEAD_ROW_MISSING : null };
      return { chain, broken: checkChainAnchors(db, accountId, chain.head, chain.anchor) };
    });
    if (read.broken) return brokenAt(accountId, 0, read.broken);
    if (read.chain === null) return { accountId, ok: true, entriesChecked: 0 };
    const result = await walkChain(ctx, accountId, read.chain);
    if (result.ok || attempt === 3) return result;
    const now = await ctx.store.read((db) => readChain(db, accountId));
    if (now?.anchor.seq === read.chain.anchor.seq) return result;
  }
}

async function walkChain(ctx: AppContext, accountId: string, chain: ChainState): Promise<ChainVerification> {
  const verifier = new ChainVerifier(chain.anchor);
  let afterSeq = chain.anchor.seq;
  for (;;) {
    const entries = await ctx.store.read((db) => chainEntries(db, accountId, afterSeq, chain.head.seq, VERIFY_BATCH));
    const broken = verifier.check(entries);
    if (broken) return brokenAt(accountId, verifier.entriesChecked, broken);
    if (entries.length < VERIFY_BATCH) break;
    afterSeq = entries.at(-1)!.seq;
  }
  const broken = verifier.finish(chain.head);
  if (broken) return brokenAt(accountId, verifier.entriesChecked, broken);
  return { accountId, ok: true, entriesChecked: verifier.entriesChecked };
}

/** Checks every chain (live and test environments of every account); the results of those that break. */
export async function verifyAllAuditChains(ctx: AppContext): Promise<{ chains: number; entriesChecked: number; broken: ChainVerification[] }> {
  let after: string | null = null;
  let chains = 0;
  let entriesChecked = 0;
  const broken: ChainVerification[] = [];
  for (;;) {
    const ids = await ctx.store.read((db) => listChains(db, after, 100));
    for (const accountId of ids) {
      const result = await verifyAuditChain(ctx, accountId);
      chains++;
      entriesChecked += result.entriesChecked;
      if (!result.ok) broken.push(result);
    }
    if (ids.length < 100) break;
    after = ids.at(-1)!;
  }
  // Entries whose chain row was deleted are in no list of chains: each such environment is broken.
  for (const accountId of await ctx.store.read((db) => chainsWithoutHead(db, 100))) {
    chains++;
    broken.push(brokenAt(accountId, 0, HEAD_ROW_MISSING));
  }
  return { chains, entriesChecked, broken };
}

const DAY_MS = 24 * 3_600_000;

/** How often entries past retention are deleted. */
export const AUDIT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const PRUNE_BATCH = 500;

/**
 * One run of the retention sweep, as the background task runs it: for each environment with
 * entries older than AUDIT_RETENTION_DAYS, deletes its oldest entries a batch per transaction and
 * moves its chain's anchor (so `audit verify` checks what is kept). Returns how many it deleted.
 */
export async function pruneExpiredAuditEvents(ctx: AppContext): Promise<number> {
  const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.auditRetentionDays * DAY_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const accounts = await ctx.store.read((db) => chainsWithEntriesBefore(db, cutoff, 100));
    let taken = 0;
    for (const accountId of accounts) {
      for (;;) {
        const n = await ctx.store.transaction((tx) => pruneChainBefore(tx, accountId, cutoff, PRUNE_BATCH));
        taken += n;
        if (n < PRUNE_BATCH) break;
      }
    }
    deleted += taken;
    if (accounts.length < 100 || taken === 0) return deleted;
  }
}
