/**
 * The archiver on its own (no store): what it writes for the journal's frames, snapshots and
 * documents, what it reports, and how it behaves when its directory is another store's, cannot be
 * written, or falls behind past its memory bound. The clock is the test's; the journal's bytes are
 * opaque here.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeArchiveFile } from '../../../../src/store/sqljs/archive/archiveFile.ts';
import { documentName, segmentName, snapshotName } from '../../../../src/store/sqljs/archive/archivePlan.ts';
import { Archiver } from '../../../../src/store/sqljs/archive/archiver.ts';
import { eventually, tempDirs, type TempDirs } from './storeTestUtils.ts';

let dirs: TempDirs;
beforeAll(async () => {
  dirs = await tempDirs();
});
afterAll(() => dirs.cleanup());

type Logged = [level: string, msg: string, fields?: Record<string, unknown>];

/** An archiver of a new directory, its clock at `clock.ms`, its log in `logged`, and the snapshots it asked for. */
async function archiver(name: string, options: { dir?: string; retentionMs?: number } = {}) {
  const dir = options.dir ?? join(await dirs.make(name), 'archive');
  const clock = { ms: 1_700_000_000_000 };
  const logged: Logged[] = [];
  const host = { requested: 0, requestSnapshot() {
    this.requested++;
  } };
  const a = new Archiver({ dir, maxDelayMs: 60_000, retentionMs: options.retentionMs ?? 86_400_000 }, (level, msg, fields) => logged.push([level, msg, fields]), () => clock.ms);
  return { a, dir, clock, logged, host };
}

async function files(dir: string): Promise<Record<string, ReturnType<typeof decodeArchiveFile>>> {
  const out: Record<string, ReturnType<typeof decodeArchiveFile>> = {};
  for (const name of (await readdir(dir)).sort()) out[name] = decodeArchiveFile(await readFile(join(dir, name)));
  return out;
}

describe('the archiver', () => {
  it('ships the base snapshot at start, then each run of frames as a segment with its acknowledgements, reporting the lag until written', async () => {
    const { a, dir, clock, host } = await archiver('ships');
    await a.open();
    await a.start(host, 0, async () => null);
    await a.drain();
    expect(await files(dir)).toEqual({ [snapshotName(0, clock.ms)]: { header: { kind: 'snapshot', lsn: 0, atMs: clock.ms }, body: Buffer.alloc(0) } });
    expect(a.archiveStatus).toEqual({ state: 'ok', archivedLsn: 0, lastSuccessMs: clock.ms, lagBytes: 0, lagSeconds: 0, problem: null });

    const t0 = clock.ms;
    a.numberingRestarted(0);
    a.framesDurable(Buffer.from('frame-1'), 1, 1, t0 + 10);
    a.framesDurable(Buffer.from('frames-2-3'), 2, 3, t0 + 20);
    clock.ms = t0 + 2_010;
    expect(a.archiveStatus).toMatchObject({ lagBytes: 17, lagSeconds: 2, archivedLsn: 0 });
    await a.close();
    const name = segmentName(1, 3, t0 + 20);
    expect((await files(dir))[name]).toEqual({
      header: { kind: 'segment', fromLsn: 1, toLsn: 3, startsNumbering: true, acks: [[1, t0 + 10], [3, t0 + 20]] },
      body: Buffer.from('frame-1frames-2-3'),
    });
    expect(a.archiveStatus).toMatchObject({ state: 'ok', archivedLsn: 3, lagBytes: 0, lagSeconds: 0 });
  });

  it('starts a segment where the journal numbers afresh, and continues it otherwise', async () => {
    const { a, dir, host } = await archiver('numbering');
    await a.open();
    await a.start(host, 0, async () => Buffer.from('image'));
    a.numberingRestarted(0);
    a.framesDurable(Buffer.from('a'), 1, 1, 1);
    a.numberingRestarted(1); // cuts: the next frame starts numbering afresh
    a.framesDurable(Buffer.from('b'), 2, 2, 2);
    a.snapshotInstalled(Buffer.from('image at 2'), 2); // cuts too
    a.framesDurable(Buffer.from('c'), 3, 3, 3);
    await a.close();
    const shipped = await files(dir);
    expect(Object.keys(shipped).filter((n) => n.startsWith('segment-'))).toEqual([segmentName(1, 1, 1), segmentName(2, 2, 2), segmentName(3, 3, 3)]);
    expect(shipped[segmentName(2, 2, 2)]!.header).toMatchObject({ startsNumbering: true });
    expect(shipped[segmentName(3, 3, 3)]!.header).toMatchObject({ startsNumbering: false });
    expect(Object.values(shipped).filter((f) => f.header.kind === 'snapshot').map((f) => f.body.toString())).toEqual(['image', 'image at 2']);
  });

  it('drops frames until it has a base, and a snapshot superseded before it was written', async () => {
    const { a, dir, clock, host } = await archiver('base');
    await a.open();
    a.framesDurable(Buffer.from('before any base'), 1, 1, 1);
    a.snapshotInstalled(Buffer.from('old'), 1);
    a.snapshotInstalled(Buffer.from('new'), 2);
    await a.start(host, 2, async () => Buffer.from('unused'));
    await a.close();
    expect(await files(dir)).toEqual({ [snapshotName(2, clock.ms)]: { header: { kind: 'snapshot', lsn: 2, atMs: clock.ms }, body: Buffer.from('new') } });
  });

  it('goes on where a cleanly stopped archive ended, without a new snapshot, and removes partial files', async () => {
    const first = await archiver('restart');
    await first.a.open();
    await first.a.start(first.host, 0, async () => null);
    first.a.numberingRestarted(0);
    first.a.framesDurable(Buffer.from('x'), 1, 1, 5);
    first.a.snapshotInstalled(Buffer.from('image at 1'), 1);
    await first.a.close();
    await writeFile(join(first.dir, `${segmentName(2, 2, 9)}.partial`), 'torn');
    const before = (await readdir(first.dir)).filter((n) => !n.endsWith('.partial')).sort();

    const again = await archiver('restart-2', { dir: first.dir });
    await again.a.open();
    expect(await readdir(first.dir)).not.toContain(`${segmentName(2, 2, 9)}.partial`);
    expect(again.a.archiveStatus.archivedLsn).toBe(1);
    await again.a.start(again.host, 1, async () => Buffer.from('not shipped'));
    again.a.numberingRestarted(1);
    again.a.framesDurable(Buffer.from('y'), 2, 2, 7);
    await again.a.close();
    expect((await readdir(first.dir)).sort()).toEqual([...before, segmentName(2, 2, 7)].sort());
  });

  it('ships a base snapshot when the archive is behind the store, or holds no snapshot to replay from', async () => {
    const behind = await archiver('behind');
    await mkdir(behind.dir, { recursive: true });
    await writeFile(join(behind.dir, snapshotName(1, 1_000)), 'x');
    await behind.a.open();
    await behind.a.start(behind.host, 3, async () => Buffer.from('image at 3'));
    await behind.a.close();
    expect(await readdir(behind.dir)).toContain(snapshotName(3, behind.clock.ms));

    const noSnapshot = await archiver('no-snapshot');
    await mkdir(noSnapshot.dir, { recursive: true });
    await writeFile(join(noSnapshot.dir, segmentName(1, 3, 1_000)), 'x');
    await noSnapshot.a.open();
    await noSnapshot.a.start(noSnapshot.host, 3, async () => Buffer.from('image at 3'));
    await noSnapshot.a.close();
    expect(await readdir(noSnapshot.dir)).toContain(snapshotName(3, noSnapshot.clock.ms));
  });

  it('refuses an archive ahead of the store: writes nothing, takes nothing, says why', async () => {
    const first = await archiver('ahead');
    await first.a.open();
    await first.a.start(first.host, 5, async () => Buffer.from('image at 5'));
    await first.a.close();
    const before = (await readdir(first.dir)).sort();
    const other = await archiver('ahead-2', { dir: first.dir });
    await other.a.open();
    await other.a.start(other.host, 3, async () => Buffer.from('image at 3'));
    const problem = 'the archive holds writes up to lsn 5, but this data directory is at lsn 3: it belongs to another store, or to this one before a restore. Give this store a new ARCHIVE_DIR';
    expect(other.a.archiveStatus).toMatchObject({ state: 'refused', problem, lagBytes: 0 });
    expect(other.logged).toEqual([['error', `archive: refused: ${problem}`, { archiveDir: first.dir }]]);
    other.a.numberingRestarted(3);
    other.a.framesDurable(Buffer.from('z'), 4, 4, 1);
    other.a.snapshotInstalled(Buffer.from('image at 4'), 4);
    other.a.documentStored('doc-1', join(first.dir, '..', 'nothing'));
    expect(other.a.archiveStatus.lagBytes).toBe(0);
    await other.a.close();
    expect((await readdir(first.dir)).sort()).toEqual(before);
  });

  it('copies a document\'s file ahead of its segment, and skips one deleted before it was copied', async () => {
    const { a, dir, clock, host } = await archiver('documents');
    const docs = await dirs.make('documents-source');
    await writeFile(join(docs, 'doc-1'), '%PDF-1.4 one');
    a.documentStored('doc-early', join(docs, 'doc-1')); // before a base: not shipped (the snapshot holds no row for it)
    await a.open();
    await a.start(host, 0, async () => null);
    a.documentStored('doc-1', join(docs, 'doc-1'));
    a.documentStored('doc-gone', join(docs, 'doc-gone'));
    a.numberingRestarted(0);
    a.framesDurable(Buffer.from('its row'), 1, 1, clock.ms);
    await a.close();
    expect(a.archiveStatus).toMatchObject({ state: 'ok', archivedLsn: 1 });
    const shipped = await files(dir);
    expect(Object.keys(shipped)).toEqual([documentName('doc-1'), segmentName(1, 1, clock.ms), snapshotName(0, clock.ms)]);
    expect(shipped[documentName('doc-1')]).toEqual({ header: { kind: 'document', id: 'doc-1', atMs: clock.ms }, body: Buffer.from('%PDF-1.4 one') });
  });

  it('starts without a directory it cannot make, reporting it, and serves on', async () => {
    const parent = await dirs.make('blocked');
    await writeFile(join(parent, 'archive'), 'a file where the directory should be');
    const { a, logged } = await archiver('blocked', { dir: join(parent, 'archive', 'inner') });
    await a.open();
    expect(a.archiveStatus.state).toBe('failing');
    expect(a.archiveStatus.problem).toMatch(/create the archive directory/);
    expect(a.archiveStatus.problem).toMatch(/ENOTDIR/);
    expect(logged).toEqual([['error', 'archive: the directory cannot be read; the service starts without it and tries again', { archiveDir: join(parent, 'archive', 'inner'), err: a.archiveStatus.problem }]]);
  });

  it('keeps what it cannot write, reports failing once, and writes it all when the directory is back', async () => {
    const { a, dir, clock, logged, host } = await archiver('failing');
    await a.open();
    await a.start(host, 0, async () => null);
    await a.drain();
    await rename(dir, `${dir}.away`);
    await writeFile(dir, 'not a directory');
    a.numberingRestarted(0);
    a.framesDurable(Buffer.from('during'), 1, 1, 1);
    a.numberingRestarted(1);
    await a.drain();
    expect(a.archiveStatus).toMatchObject({ state: 'failing', archivedLsn: 0, lagBytes: 6 });
    a.framesDurable(Buffer.from('more'), 2, 2, 2);
    // The lag is the journal's bytes waiting (a snapshot is no lag), and the age of the oldest of them.
    a.snapshotInstalled(Buffer.from('image at 2'), 2);
    clock.ms = 6_001;
    expect(a.archiveStatus).toMatchObject({ lagBytes: 10, lagSeconds: 6 });
    a.numberingRestarted(2);
    expect(logged.filter(([level]) => level === 'error')).toHaveLength(1);
    expect(logged[0]).toEqual(['error', 'archive: a file could not be written; the service goes on serving and the archive catches up when it can', { archiveDir: dir, err: a.archiveStatus.problem }]);
    await rm(dir);
    await rename(`${dir}.away`, dir);
    await eventually(() => a.archiveStatus.state === 'ok' && a.archiveStatus.archivedLsn === 2);
    expect(logged.filter(([level]) => level === 'info')).toEqual([['info', 'archive: writing again', { archiveDir: dir, archivedLsn: 1 }]]);
    expect(a.archiveStatus).toMatchObject({ problem: null, lagBytes: 0 });
    await a.close();
    expect((await readdir(dir)).filter((n) => n.startsWith('segment-'))).toEqual([segmentName(1, 1, 1), segmentName(2, 2, 2)]);
  });

  it('lets go of a backlog past its memory bound and asks for a fresh snapshot to start again from', async () => {
    const { a, dir, logged, host } = await archiver('backlog');
    await a.open();
    await a.start(host, 0, async () => null);
    await a.drain();
    await rm(dir, { recursive: true });
    await writeFile(dir, 'not a directory');
    const big = Buffer.alloc(33 * 1024 * 1024); // the same bytes twice: 66 MiB held, past the 64 MiB bound
    a.numberingRestarted(0);
    a.framesDurable(big, 1, 1, 1);
    a.numberingRestarted(1);
    await a.drain();
    expect(a.archiveStatus.state).toBe('failing');
    a.framesDurable(big, 2, 2, 2);
    a.numberingRestarted(2);
    expect(logged.at(-1)).toEqual(['error', 'archive: unwritten segments dropped; the archive resumes from a fresh snapshot once it can be written', { archiveDir: dir, limitBytes: 64 * 1024 * 1024 }]);
    expect(a.archiveStatus.lagBytes).toBe(0);
    a.framesDurable(Buffer.from('after the drop'), 3, 3, 3); // no base to replay it from: not kept
    expect(a.archiveStatus.lagBytes).toBe(0);
    await rm(dir);
    await mkdir(dir);
    await eventually(() => host.requested > 0);
    a.snapshotInstalled(Buffer.from('fresh base at 3'), 3);
    await eventually(() => a.archiveStatus.state === 'ok');
    await a.close();
    expect(Object.keys(await files(dir)).map((n) => n.split('-')[0])).toEqual(['snapshot']);
  });

  it('deletes what retention no longer needs after a write, keeping the base of the window', async () => {
    const { a, dir, clock, host } = await archiver('retention', { retentionMs: 1_000 });
    await mkdir(dir, { recursive: true });
    const old = clock.ms - 10_000;
    const put = (name: string) => writeFile(join(dir, name), 'x');
    await put(snapshotName(0, old));
    await put(segmentName(1, 4, old + 100));
    await put(snapshotName(4, old + 200));
    await put(segmentName(5, 6, old + 300));
    await a.open();
    await a.start(host, 6, async () => null); // a clean restart: no snapshot to ship
    a.numberingRestarted(6);
    a.framesDurable(Buffer.from('x'), 7, 7, clock.ms);
    await a.close();
    const kept = [segmentName(5, 6, old + 300), snapshotName(4, old + 200), segmentName(7, 7, clock.ms)].sort();
    await eventually(async () => (await readdir(dir)).length === kept.length);
    expect((await readdir(dir)).sort()).toEqual(kept);

    // Retention runs at most once an hour: files it would delete stay until then.
    const again = await archiver('retention-2', { dir, retentionMs: 1_000 });
    again.clock.ms = clock.ms;
    await again.a.open();
    await again.a.start(again.host, 7, async () => null);
    const write = async (lsn: number) => {
      again.a.numberingRestarted(lsn - 1);
      again.a.framesDurable(Buffer.from('y'), lsn, lsn, again.clock.ms);
      again.a.snapshotInstalled(Buffer.from(`image at ${lsn}`), lsn);
      await again.a.drain();
      await new Promise((resolve) => setImmediate(resolve));
    };
    const start = again.clock.ms;
    await write(8); // the first write after start runs retention: nothing is old enough yet
    again.clock.ms = start + 10_000;
    await write(9); // within the hour: no retention, though snapshot 4 is no longer the window's base
    await new Promise((resolve) => setTimeout(resolve, 200)); // room for a retention run, were one started
    expect(await readdir(dir)).toContain(snapshotName(4, old + 200));
    again.clock.ms = start + 60 * 60 * 1000;
    await write(10);
    await eventually(async () => !(await readdir(dir)).includes(snapshotName(4, old + 200)));
    await again.a.close();
  });
});
