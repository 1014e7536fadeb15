/**
 * The PostgreSQL engine's RowMemo (src/store/postgres/sharedMemo.ts): what several instances may
 * remember of a row another can change. The NOTIFY itself is tested end to end in
 * test/postgres/scaleOut.test.ts; here the rules that make a remembered row safe.
 */
import { describe, expect, it } from 'vitest';
import { SHARED_MEMO_TTL_MS, SharedMemo } from '../../../src/store/postgres/sharedMemo.ts';

function memo(options: { listening?: boolean } = {}) {
  let now = 0;
  let listening = options.listening ?? true;
  const shared = new SharedMemo(() => listening, () => now);
  return {
    shared,
    advance: (ms: number) => (now += ms),
    setListening: (value: boolean) => (listening = value),
  };
}

describe('SharedMemo', () => {
  it('a read remembers at once; the next unit of work finds the row', () => {
    const { shared } = memo();
    shared.view(true).set('k', 1);
    expect(shared.view(true).get('k')).toBe(1);
  });

  it('a transaction remembers only at its commit, and nothing when it rolls back', () => {
    const { shared } = memo();
    const tx = shared.view(false);
    tx.set('k', 1);
    expect(tx.get('k')).toBe(1); // its own read
    expect(shared.view(true).get('k')).toBeUndefined();
    tx.committed();
    expect(shared.view(true).get('k')).toBe(1);
    shared.view(false).set('other', 2); // never committed: rolled back
    expect(shared.view(true).get('other')).toBeUndefined();
  });

  it('a row forgotten in a transaction is hidden from it at once, and from everyone at its commit', () => {
    const { shared } = memo();
    shared.view(true).set('k', 1);
    const tx = shared.view(false);
    tx.forget('k');
    expect(tx.get('k')).toBeUndefined();
    tx.set('k', 2); // what it read after its own change is not remembered
    expect(tx.forgotten.has('k')).toBe(true);
    expect(shared.view(true).get('k')).toBe(1);
    tx.committed();
    expect(shared.view(true).get('k')).toBeUndefined();
  });

  it('what a unit read while something was forgotten (a notification, another commit) is not remembered', () => {
    const { shared } = memo();
    const read = shared.view(true);
    const tx = shared.view(false);
    shared.clear(); // another instance's NOTIFY arrived while both were reading
    read.set('k', 'old');
    tx.set('j', 'old');
    tx.committed();
    expect(shared.view(true).get('k')).toBeUndefined();
    expect(shared.view(true).get('j')).toBeUndefined();
  });

  it('remembers nothing while the LISTEN is not in place', () => {
    const { shared, setListening } = memo({ listening: false });
    shared.view(true).set('k', 1);
    expect(shared.view(true).get('k')).toBeUndefined();
    setListening(true);
    shared.view(true).set('k', 1);
    expect(shared.view(true).get('k')).toBe(1);
  });

  it('starts listening when a row is first offered, not before (an admin command that remembers nothing opens no LISTEN connection)', () => {
    let subscriptions = 0;
    const shared = new SharedMemo(() => true, () => 0, () => subscriptions++);
    shared.view(true).get('k');
    shared.view(false).committed();
    expect(subscriptions).toBe(0);
    shared.view(true).set('k', 1);
    shared.view(true).set('j', 2);
    expect(subscriptions).toBe(1);
  });

  it(`trusts an entry ${SHARED_MEMO_TTL_MS} ms at most (a notification lost on a dead connection)`, () => {
    const { shared, advance } = memo();
    shared.view(true).set('k', 1);
    advance(SHARED_MEMO_TTL_MS - 1);
    expect(shared.view(true).get('k')).toBe(1);
    advance(1);
    expect(shared.view(true).get('k')).toBeUndefined();
  });
});
