/**
 * Idempotency-Key handling for POST operations (the Stripe model, as API-CONVENTIONS.md fixes it):
 * within 24 hours the same key and request replay the stored response; the same key with a
 * different request is 422; a retry while the first is still running is 409.
 *
 * Completed responses are stored durably. The "still running" state is kept in memory: a single
 * instance owns its requests. So that a crash between the handler's commit and the saving of its
 * response cannot make a retry run twice, the handler's first write transaction also records the
 * key as "took effect" (see `execute`'s `mark`); a retry that finds only that record gets 409
 * `idempotency_outcome_unknown` instead of a second effect.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../clock.ts';
import {
  IN_PROGRESS_STATUS,
  claimIdempotencyKey,
  deleteExpiredResponses,
  findStoredResponse,
  releaseIdempotencyClaim,
  saveStoredResponse,
} from '../store/idempotency.ts';
import type { Store, Tx } from '../store/store.ts';
import { isAppError } from '../errors.ts';
import { ApiProblem, problemOf, problems } from './problem.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A claim older than this was left by an instance that died mid-request (several instances on PostgreSQL). */
const ABANDONED_CLAIM_MS = 10 * 60 * 1000;

/** Stored-header marker: the response carried secrets that were not stored, so it cannot be replayed. */
const WITHHELD_MARKER = 'x-idempotency-withheld';

/** The status stored with the "took effect" record, before (or instead of) the real response. */
const EFFECT_ONLY_STATUS = 0;

export interface CapturedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Which outcomes are stored for replay: results and business-rule refusals, not transient states. */
function isReplayable(status: number): boolean {
  return status < 500 && status !== 409 && status !== 429 && status !== 401 && status !== 403;
}

/** JSON text with object keys sorted at every level: the same document in any key order or spacing gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]]))
      : v,
  );
}

/** What identifies a request for Idempotency-Key: method, path and the body as canonical JSON. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

/** The response as it may be stored: secret fields removed, and marked so it is not replayed as if whole. */
function withholdSecrets(response: CapturedResponse, secretFields: readonly string[]): CapturedResponse {
  if (secretFields.length === 0 || response.status >= 300) return response;
  const body = JSON.parse(response.body) as Record<string, unknown>;
  const present = secretFields.filter((field) => field in body);
  if (present.length === 0) return response;
  for (const field of present) delete body[field];
  return { status: response.status, headers: { ...response.headers, [WITHHELD_MARKER]: present.join(', ') }, body: JSON.stringify(body) };
}

export class IdempotencyKeys {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #inFlight = new Set<string>();

  constructor(store: Store, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /**
   * Runs `execute` at most once per (account, key) and request. `execute` returns the response it
   * produced or throws an ApiProblem; either is captured by `capture` into what is stored. It must
   * call `mark(tx)` inside each write transaction it commits (the request's store does this).
   */
  async run(
    accountId: string,
    key: string,
    fingerprint: string,
    execute: (mark: (tx: Tx) => Promise<void>) => Promise<CapturedResponse>,
    captureProblem: (problem: ApiProblem) => CapturedResponse,
    /** Top-level response fields that are secrets (an API key): never stored, so never replayed. */
    secretFields: readonly string[] = [],
  ): Promise<CapturedResponse & { replayed: boolean }> {
    const slot = `${accountId}\u0000${key}`;
    if (this.#inFlight.has(slot)) {
      throw problems.conflict('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed; retry later.');
    }
    this.#inFlight.add(slot);
    // Several instances (PostgreSQL): the key is claimed in the database, so a retry on another
    // instance also sees the first request running; the claim goes when the request ends.
    const shared = this.#store.sharedByInstances === true;
    let claimed = false;
    try {
      const now = this.#clock.now();
      const notBefore = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
      const stored = shared
        ? await this.#store.transaction((tx) =>
            claimIdempotencyKey(tx, accountId, key, { requestHash: fingerprint, createdAt: now.toISOString() }, notBefore,
              new Date(now.getTime() - ABANDONED_CLAIM_MS).toISOString()),
          )
        : await this.#store.read((db) => findStoredResponse(db, accountId, key, notBefore));
      claimed = shared && !stored;
      if (stored?.status === IN_PROGRESS_STATUS) {
        throw problems.conflict('idempotency_in_progress', 'A request with this Idempotency-Key is still being processed; retry later.');
      }
      if (stored) {
        if (stored.requestHash !== fingerprint) {
          throw problems.unprocessable(
            'idempotency_key_reused',
            'This Idempotency-Key was first used with a different request; use a new key for a new request.',
          );
        }
        if (stored.status === EFFECT_ONLY_STATUS) {
          throw problems.conflict(
            'idempotency_outcome_unknown',
            'The first request with this Idempotency-Key took effect, but the service restarted before its response was recorded. ' +
              'Look the result up (for example in the list) instead of retrying; a new key makes a new request.',
          );
        }
        const withheld = stored.headers[WITHHELD_MARKER];
        if (withheld) {
          throw problems.conflict(
            'idempotency_secret_withheld',
            `This request already succeeded, but its response held a secret (${withheld}) that is shown only once and never stored. ` +
              `If it was lost, revoke what was created and create it again. The first response was: ${stored.body}`,
          );
        }
        return { status: stored.status, headers: stored.headers, body: stored.body, replayed: true };
      }

      const mark = (tx: Tx) =>
        saveStoredResponse(tx, accountId, key, {
          requestHash: fingerprint,
          status: EFFECT_ONLY_STATUS,
          headers: {},
          body: '',
          createdAt: now.toISOString(),
        });
      let response: CapturedResponse;
      try {
        response = await execute(mark);
      } catch (err) {
        const problem = err instanceof ApiProblem ? err : isAppError(err) ? problemOf(err) : null;
        if (!problem || !isReplayable(problem.status)) throw err;
        response = captureProblem(problem);
      }
      if (isReplayable(response.status)) {
        const storable = withholdSecrets(response, secretFields);
        await this.#store.transaction((tx) =>
          saveStoredResponse(tx, accountId, key, { requestHash: fingerprint, ...storable, createdAt: now.toISOString() }),
        );
        claimed = false;
      }
      return { ...response, replayed: false };
    } finally {
      this.#inFlight.delete(slot);
      if (claimed) await this.#store.transaction((tx) => releaseIdempotencyClaim(tx, accountId, key)).catch(() => {});
    }
  }

  /** Removes stored responses past the 24-hour window. */
  async sweep(): Promise<number> {
    const cutoff = new Date(this.#clock.now().getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    return this.#store.transaction((tx) => deleteExpiredResponses(tx, cutoff));
  }
}
