/**
 * How much of one environment's traffic the request log stores in detail: at most `perMinute`
 * entries a calendar minute (of the app's clock). Past that a minute's requests are counted, not
 * kept, but for the last one: when the minute is over it is stored as the minute's marker, with how
 * many requests past the budget there were (itself included) and when the first of them arrived.
 * So a flood from one key costs the log a bounded number of entries whatever its rate, and the log
 * still says that it happened. Pure: the caller passes the entries, which carry their own time.
 *
 * Memory: one small window per environment that made a request this minute, and one entry (the
 * latest past the budget) for each whose budget ran out.
 */
export const MINUTE_MS = 60_000;

export interface Budgeted {
  /** The environment the entry belongs to (the budget is per environment: account and mode). */
  accountId: string;
  /** When the request arrived, in milliseconds since the epoch. */
  arrivedAt: number;
}

/** What a marker says of the requests its minute did not store. */
export interface Omission {
  /** Requests past the minute's budget, the marker's own included. */
  count: number;
  /** When the first of them arrived (milliseconds since the epoch). */
  firstAt: number;
}

interface Window<E> {
  minute: number;
  stored: number;
  omitted: number;
  firstOmittedAt: number;
  last: E | null;
}

export class RequestLogBudget<E extends Budgeted> {
  readonly perMinute: number;
  readonly #windows = new Map<string, Window<E>>();

  constructor(perMinute: number) {
    this.perMinute = perMinute;
  }

  /**
   * Whether `entry` is stored now. When it is not, it is counted against its minute (and kept as
   * that minute's would-be marker until a later one replaces it). A minute of the same environment
   * that is over when this entry arrives is closed first: its marker, if any, is returned too.
   */
  take(entry: E): { store: boolean; closed: { entry: E; omitted: Omission } | null } {
    const minute = Math.floor(entry.arrivedAt / MINUTE_MS);
    let window = this.#windows.get(entry.accountId);
    let closed: { entry: E; omitted: Omission } | null = null;
    // An entry of an earlier minute (a slow answer recorded late) counts against the current window.
    if (window && minute > window.minute) {
      closed = markerOf(window);
      window = undefined;
    }
    if (!window) {
      window = { minute, stored: 0, omitted: 0, firstOmittedAt: 0, last: null };
      this.#windows.set(entry.accountId, window);
    }
    if (window.stored < this.perMinute) {
      window.stored++;
      return { store: true, closed };
    }
    if (window.omitted === 0) window.firstOmittedAt = entry.arrivedAt;
    window.omitted++;
    window.last = entry;
    return { store: false, closed };
  }

  /** Closes every window whose minute is over at `now` (all of them when `now` is Infinity): the markers to store. */
  close(now: number): Array<{ entry: E; omitted: Omission }> {
    const current = Math.floor(now / MINUTE_MS);
    const markers: Array<{ entry: E; omitted: Omission }> = [];
    for (const [accountId, window] of this.#windows) {
      if (window.minute >= current) continue;
      this.#windows.delete(accountId);
      const marker = markerOf(window);
      if (marker) markers.push(marker);
    }
    return markers;
  }
}

function markerOf<E>(window: Window<E>): { entry: E; omitted: Omission } | null {
  return window.last === null ? null : { entry: window.last, omitted: { count: window.omitted, firstAt: window.firstOmittedAt } };
}
