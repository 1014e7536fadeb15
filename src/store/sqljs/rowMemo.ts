import type { RowMemo } from '../store.ts';

/** Rows remembered at most (see RowMemo); the oldest is forgotten beyond. */
const MEMO_MAX_ROWS = 10_000;

/** This engine's RowMemo: it is the database's one writer, and empties the memo on rollback and rebuild. */
export class Memo implements RowMemo {
  private readonly rows = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.rows.get(key) as T | undefined;
  }
  set(key: string, value: unknown): void {
    this.rows.delete(key);
    if (this.rows.size >= MEMO_MAX_ROWS) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(key, value);
  }
  forget(key: string): void {
    this.rows.delete(key);
  }
  clear(): void {
    this.rows.clear();
  }
}
