import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, lazyChild } from '../../src/log.ts';

function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger(level, destination), lines };
}

describe('lazyChild', () => {
  it('makes no child for a level the logger leaves out, and writes enabled levels with the bindings', async () => {
    const { log, lines } = capture('warn');
    const child = vi.spyOn(log, 'child');
    const request = lazyChild(log, { requestId: 'req-1' });
    request.info({ a: 1 }, 'left out');
    request.debug('left out too');
    expect(child).not.toHaveBeenCalled();
    request.warn({ b: 2, token: 'secret' }, 'written');
    request.error('written too');
    expect(child).toHaveBeenCalledTimes(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => [l.msg, l.requestId, l.b, l.token])).toEqual([
      ['written', 'req-1', 2, '[redacted]'],
      ['written too', 'req-1', undefined, undefined],
    ]);
  });

  it('is the child for everything else: its level, its own children', async () => {
    const { log, lines } = capture('info');
    const request = lazyChild(log, { requestId: 'req-2' });
    expect(request.level).toBe('info');
    expect(request.isLevelEnabled('debug')).toBe(false);
    request.child({ export: 'csv' }).info('nested');
    request.info('direct');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => [l.msg, l.requestId, l.export])).toEqual([
      ['nested', 'req-2', 'csv'],
      ['direct', 'req-2', undefined],
    ]);
  });
});
