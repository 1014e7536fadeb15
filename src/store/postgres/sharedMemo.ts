/**
 * The RowMemo of the PostgreSQL engine (see RowMemo in ../store.ts), for rows that change rarely and
 * are read on hot paths (an account's pricing context on every quote, its underwriting rules on
 * every submission): several instances write the database, so what one remembers another may
 * change. Each instance forgets on MEMO_CHANNEL, which a transaction that forgot a row notifies at
 * its commit (NOTIFY is delivered to every instance, this one included, only once the writer has
 * committed):
 *
 * - a transaction's own forget() hides the row from that transaction at once, and at commit the
 *   instance forgets it and every instance is notified;
 * - what a unit of work read is remembered only if nothing was forgotten anywhere since the unit
 *   began (the generation check), since it may have read the row as it was before; a write
 *   transaction's rows are remembered at its commit, never when it rolled back;
 * - nothing is remembered while this instance is not listening on MEMO_CHANNEL (the listener not
 *   yet connected, or reconnecting: every memo is emptied when it reconnects), and an entry is
 *   trusted for SHARED_MEMO_TTL_MS at most, should a notification be lost on a connection that
 *   died without anyone noticing yet.
 * So another instance prices with a changed rate sheet once the notification reaches it
 * (milliseconds after the commit), and 2 s after it at the very latest: the bound API keys have.
 */
import type { RowMemo } from '../store.ts';

export const MEMO_CHANNEL = 'mos_row_memo';

/** How long a remembered row is trusted without a notification (see the file comment). */
export const SHARED_MEMO_TTL_MS = 2_000;

/** Rows remembered at most; the oldest is forgotten beyond. */
const MEMO_MAX_ROWS = 10_000;

/** One unit of work's view of the memo. */
export interface MemoView extends RowMemo {
  /** Keys this unit forgot: notified on MEMO_CHANNEL before its COMMIT. */
  readonly forgotten: ReadonlySet<string>;
  /** The unit committed: remember what it read, forget what it changed. */
  committed(): void;
}

export class SharedMemo {
  private readonly rows = new Map<string, { value: unknown; at: number }>();
  private generation = 0;
  /** False until the LISTEN on MEMO_CHANNEL is in place, and while it is being restored. */
  private listening: () => boolean;
  private readonly now: () => number;
  /** Called when a row is first offered: the engine starts listening then, not before (an admin command that remembers nothing opens no LISTEN connection). */
  private subscribe: (() => void) | null;

  constructor(listening: () => boolean, now: () => number = () => performance.now(), subscribe: (() => void) | null = null) {
    this.listening = listening;
    this.now = now;
    this.subscribe = subscribe;
  }

  /** Everything forgotten: a notification on MEMO_CHANNEL (whichever row it names), or the listener reconnecting. */
  clear(): void {
    this.generation += 1;
    this.rows.clear();
  }

  private remember(key: string, value: unknown): void {
    this.rows.delete(key);
    if (this.rows.size >= MEMO_MAX_ROWS) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, { value, at: this.now() });
  }

  /**
   * A view for one unit of work. `immediate` (read-only units): a row read is remembered at once;
   * otherwise (transactions) at `committed()`.
   */
  view(immediate: boolean): MemoView {
    const began = this.generation;
    const forgotten = new Set<string>();
    const pending = new Map<string, unknown>();
    const fresh = () => began === this.generation && this.listening();
    return {
      forgotten,
      get: <T>(key: string): T | undefined => {
        if (forgotten.has(key)) return undefined;
        if (pending.has(key)) return pending.get(key) as T;
        const entry = this.rows.get(key);
        if (!entry) return undefined;
        if (this.now() - entry.at >= SHARED_MEMO_TTL_MS) {
          this.rows.delete(key);
          return undefined;
        }
        return entry.value as T;
      },
      set: (key: string, value: unknown) => {
        if (this.subscribe) {
          const subscribe = this.subscribe;
          this.subscribe = null;
          subscribe();
        }
        if (forgotten.has(key) || !fresh()) return;
        if (immediate) this.remember(key, value);
        else pending.set(key, value);
      },
      forget: (key: string) => {
        forgotten.add(key);
        pending.delete(key);
      },
      committed: () => {
        if (forgotten.size > 0) {
          this.generation += 1;
          for (const key of forgotten) this.rows.delete(key);
        } else if (fresh()) {
          for (const [key, value] of pending) this.remember(key, value);
        }
      },
    };
  }
}
