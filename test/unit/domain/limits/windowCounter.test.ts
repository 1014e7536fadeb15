import { describe, expect, it } from 'vitest';
import { clientAddressKey } from '../../../../src/domain/limits/clientAddress.ts';
import { WINDOW_MS, WindowCounter } from '../../../../src/domain/limits/windowCounter.ts';

describe('WindowCounter', () => {
  it('allows the limit in a window, refuses the next with the seconds left, and starts again in the next window', () => {
    const counter = new WindowCounter(2);
    expect(counter.take('a', 0)).toMatchObject({ allowed: true, remaining: 1, retryAfterSeconds: 60 });
    expect(counter.take('a', 1_000)).toMatchObject({ allowed: true, remaining: 0 });
    expect(counter.take('a', 30_500)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 30 });
    expect(counter.take('b', 30_500)).toMatchObject({ allowed: true });
    expect(counter.take('a', WINDOW_MS)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('a released use is handed back in its window, once, and never into a later window', () => {
    const counter = new WindowCounter(1);
    const first = counter.take('a', 0);
    expect(counter.take('a', 1).allowed).toBe(false);
    first.release();
    first.release();
    expect(counter.take('a', 2).allowed).toBe(true);
    expect(counter.take('a', 3).allowed).toBe(false);

    const old = counter.take('b', 0);
    const next = counter.take('b', WINDOW_MS); // a new window
    expect(next.allowed).toBe(true);
    old.release(); // belongs to the window that ended: changes nothing
    expect(counter.take('b', WINDOW_MS + 1).allowed).toBe(false);
  });

  it('memory follows active keys: ended windows are dropped by a sweep at most once a minute, live ones kept', () => {
    const counter = new WindowCounter(5);
    counter.take('early', 0); // a counter starts as if it had just swept at time 0
    counter.take('late', 30_000);
    expect(counter.size).toBe(2);
    // 'early' ended at 60 s, but the last sweep was at 0: the next one comes at 60 s.
    counter.take('late', 59_999);
    expect(counter.size).toBe(2);
    counter.take('other', 60_000);
    expect(counter.size).toBe(2); // 'early' dropped; 'late' (until 90 s) and 'other' kept
    counter.take('late', 60_001); // 'late' still counting in its window
    expect(counter.take('late', 60_002).remaining).toBe(1);
    // No sweep before 120 s, though 'late' ended at 90 s.
    counter.take('x', 119_999);
    expect(counter.size).toBe(3);
    counter.take('x', 120_000);
    expect(counter.size).toBe(1); // 'late' and 'other' (ended at 120 s exactly) dropped; 'x' (from 119.999 s) kept
    expect(new WindowCounter(0).size).toBe(0);
  });

  it('a refused use has nothing to release', () => {
    const counter = new WindowCounter(1);
    counter.take('a', 0);
    counter.take('a', 1).release();
    expect(counter.take('a', 2).allowed).toBe(false);
  });

  it('0 is no limit', () => {
    const counter = new WindowCounter(0);
    for (let i = 0; i < 1000; i++) expect(counter.take('a', i).allowed).toBe(true);
  });
});

describe('clientAddressKey', () => {
  it('keys IPv4 by address, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64', () => {
    expect(clientAddressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(clientAddressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientAddressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:db8:1:2:bbbb::9')).toBe(clientAddressKey('2001:db8:1:2:aaaa::1'));
    expect(clientAddressKey('2001:db8:1:3::1')).not.toBe(clientAddressKey('2001:db8:1:2::1'));
    expect(clientAddressKey('::1')).toBe('0:0:0:0::/64');
    expect(clientAddressKey(undefined)).toBe('unknown');
  });
});

describe('WindowCounter, more closely', () => {
  it('counts down what remains, and the seconds to the window end, never under 1', () => {
    const counter = new WindowCounter(3);
    expect(counter.limit).toBe(3);
    expect(counter.enabled).toBe(true);
    expect(counter.take('a', 10_000)).toMatchObject({ allowed: true, remaining: 2, retryAfterSeconds: 60 });
    expect(counter.take('a', 40_001)).toMatchObject({ allowed: true, remaining: 1, retryAfterSeconds: 30 });
    expect(counter.take('a', 69_999)).toMatchObject({ allowed: true, remaining: 0, retryAfterSeconds: 1 });
    expect(counter.take('a', 69_999)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(counter.take('a', 70_000)).toMatchObject({ allowed: true, remaining: 2, retryAfterSeconds: 60 });
    expect(new WindowCounter(0).take('a', 0)).toMatchObject({ allowed: true, retryAfterSeconds: 0 });
    expect(new WindowCounter(0).enabled).toBe(false);
  });

  it('a use released twice is handed back once, however many the window counts', () => {
    const counter = new WindowCounter(3);
    const first = counter.take('a', 0);
    counter.take('a', 1);
    counter.take('a', 2);
    first.release();
    first.release();
    expect(counter.take('a', 3)).toMatchObject({ allowed: true, remaining: 0 });
    expect(counter.take('a', 4).allowed).toBe(false);
  });

  it("dropping ended windows (once a minute) keeps the windows still running: a key's count survives it", () => {
    const counter = new WindowCounter(1);
    expect(counter.take('a', 30_000).allowed).toBe(true);
    expect(counter.take('other', 60_000).allowed).toBe(true); // the first sweep: 'a' is 30 s into its window
    expect(counter.take('a', 60_001).allowed).toBe(false);
    expect(counter.take('a', 90_000).allowed).toBe(true); // its own minute ended
    // A release after the sweep dropped the window hands nothing to the key's next window.
    const old = counter.take('b', 120_000);
    expect(counter.take('c', 180_001).allowed).toBe(true); // sweep: 'b' ended and is dropped
    expect(counter.take('b', 180_002).allowed).toBe(true);
    old.release();
    expect(counter.take('b', 180_003).allowed).toBe(false);
  });
});

describe('clientAddressKey, more closely', () => {
  it('drops an IPv6 zone, keys what is no IP address apart, and an empty address as unknown', () => {
    expect(clientAddressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientAddressKey('192.0.2.7%1')).toBe('192.0.2.7');
    expect(clientAddressKey('not-an-address')).toBe('other:not-an-address');
    expect(clientAddressKey('')).toBe('unknown');
    expect(clientAddressKey('::ffff:7f00:1')).toBe('127.0.0.1');
  });
});
