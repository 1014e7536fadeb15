/**
 * The embedded store's continuous archive (ARCHIVE_DIR): what it ships, what a restore from it
 * brings back (to the last write, to an LSN, to a time), and how it behaves when the archive cannot
 * be written, has a hole, or belongs to another store.
 */
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArchiveFileError, decodeArchiveFile, encodeArchiveFile } from '../../../../src/store/sqljs/archive/archiveFile.ts';
import { listArchive, restorePlan, retentionPlan, segmentName, snapshotName } from '../../../../src/store/sqljs/archive/archivePlan.ts';
import { ArchiveRestoreError, restoreFromArchive } from '../../../../src/store/sqljs/archive/restoreArchive.ts';
import type { SqlJsStore } from '../../../../src/store/sqljs/sqljsStore.ts';
import { eventually, migrationsDir, open, tempDirs, type TempDirs } from './storeTestUtils.ts';

let dirs: TempDirs;
let migrations: string;
beforeAll(async () => {
  dirs = await tempDirs();
  migrations = await migrationsDir(dirs, { '001_rows.sql': 'CREATE TABLE rows (id INTEGER PRIMARY KEY, v TEXT NOT NULL);' });
});
afterAll(() => dirs.cleanup());

describe('an archive file', () => {
  const file = encodeArchiveFile({ kind: 'segment', fromLsn: 5, toLsn: 9, startsNumbering: true, acks: [[9, 1_000]] }, Buffer.from('frames\n\x00\xff'));

  it('reads back what was written, whatever bytes the body holds (no newline at its end)', () => {
    const read = decodeArchiveFile(file);
    expect(read.header).toEqual({ kind: 'segment', fromLsn: 5, toLsn: 9, startsNumbering: true, acks: [[9, 1_000]] });
    expect(read.body).toEqual(Buffer.from('frames\n\x00\xff'));
  });

  it('is refused cut short, extended, with one byte flipped, or re-framed, each with its reason', () => {
    expect(() => decodeArchiveFile(file.subarray(0, file.length - 1))).toThrow(/lengths say .* but it has/);
    expect(() => decodeArchiveFile(Buffer.concat([file, Buffer.from([0])]))).toThrow(/lengths say .* but it has/);
    const flipped = Buffer.from(file);
    flipped[file.length - 40]! ^= 0x01;
    expect(() => decodeArchiveFile(flipped)).toThrow(/checksum does not match/);
    const reframed = Buffer.from(file);
    reframed.writeUInt32BE(reframed.readUInt32BE(8) + 1, 8);
    expect(() => decodeArchiveFile(reframed)).toThrow(ArchiveFileError);
    expect(() => decodeArchiveFile(Buffer.from('MOSBACKUP\n'))).toThrow(ArchiveFileError);
  });
});

describe('the archive plan', () => {
  const listing = listArchive([
    snapshotName(0, 1_000),
    segmentName(1, 10, 2_000),
    segmentName(11, 20, 3_000),
    snapshotName(20, 3_500),
    segmentName(21, 30, 4_000),
    'segment-x.mosarc.partial',
    'notes.txt',
  ]);

  it('restores from the newest snapshot at or before the target, then its segments in order', () => {
    expect(restorePlan(listing, 15)).toMatchObject({ snapshot: { lsn: 0 }, segments: [{ fromLsn: 1 }, { fromLsn: 11 }], toLsn: 15 });
    expect(restorePlan(listing)).toMatchObject({ snapshot: { lsn: 20 }, segments: [{ fromLsn: 21 }], toLsn: 30 });
  });

  it('names a gap and restores nothing past it', () => {
    const holed = listArchive([snapshotName(0, 1_000), segmentName(1, 10, 2_000), segmentName(21, 30, 4_000)]);
    expect(() => restorePlan(holed)).toThrow(/gap: lsn 11 to 20 is missing.*cannot restore past lsn 10/);
    expect(restorePlan(holed, 10).toLsn).toBe(10);
  });

  it('retention deletes only what is older than the base of the window, never that base', () => {
    expect(retentionPlan(listing, 3_600, 100)).toEqual([snapshotName(0, 1_000), segmentName(1, 10, 2_000), segmentName(11, 20, 3_000)]);
    expect(retentionPlan(listing, 3_400, 100)).toEqual([]); // the window starts before the second snapshot: the first is its base
  });
});

interface Written {
  v: string;
  lsn: number;
  ackedAt: number;
  sentAt: number;
}

async function writeRows(store: SqlJsStore, count: number, tag: string, log: Written[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const v = `${tag}-${i}`;
    const sentAt = Date.now();
    await store.transaction(async (tx) => {
      await tx.run('INSERT INTO rows (v) VALUES (?)', [v]);
    });
    log.push({ v, lsn: store.stats().lsn, ackedAt: Date.now(), sentAt });
  }
}

/** The values of the rows table in a restored data directory. */
async function restoredRows(dataDir: string): Promise<string[]> {
  const store = await open(dataDir, migrations);
  try {
    return (await store.read((db) => db.all<{ v: string }>('SELECT v FROM rows ORDER BY id'))).map((r) => r.v);
  } finally {
    await store.close();
  }
}

describe('a store with ARCHIVE_DIR', () => {
  let archiveDir: string;
  let store: SqlJsStore;
  const written: Written[] = [];

  beforeAll(async () => {
    archiveDir = await dirs.make('archive');
    // A small checkpoint threshold: the writes below cross several checkpoints (each ships a snapshot).
    store = await open(await dirs.make('live'), migrations, { checkpointBytes: 4096, checkpointJournalShare: 0, archive: { dir: archiveDir, maxDelayMs: 40, retentionMs: 7 * 86_400_000 } });
    await writeRows(store, 120, 'a', written);
    await store.checkpoint();
    await writeRows(store, 120, 'b', written);
    await eventually(() => store.archiveStatus()!.archivedLsn === store.stats().lsn);
  });
  afterAll(() => store.close());

  it('ships segments and the snapshots of several checkpoints, each file whole', async () => {
    const names = await readdir(archiveDir);
    const listing = listArchive(names);
    expect(listing.snapshots.length).toBeGreaterThanOrEqual(3);
    expect(listing.segments.length).toBeGreaterThan(1);
    for (const name of names) expect(decodeArchiveFile(await readFile(join(archiveDir, name))).header.kind).toMatch(/^(segment|snapshot)$/);
    expect(store.archiveStatus()).toMatchObject({ state: 'ok', lagBytes: 0, problem: null });
  });

  it('restores to the last archived write, with every write there', async () => {
    const into = join(await dirs.make('r-last'), 'data');
    const restored = await restoreFromArchive(archiveDir, into);
    expect(restored.lsn).toBe(store.stats().lsn);
    expect(await restoredRows(into)).toEqual(written.map((w) => w.v));
  });

  it('restores to an LSN: every write at or before it, and none after', async () => {
    for (const pick of [0.1, 0.45, 0.8]) {
      const target = written[Math.floor(pick * written.length)]!.lsn;
      const into = join(await dirs.make(`r-lsn-${target}`), 'data');
      expect((await restoreFromArchive(archiveDir, into, { lsn: target })).lsn).toBe(target);
      expect(await restoredRows(into)).toEqual(written.filter((w) => w.lsn <= target).map((w) => w.v));
    }
  });

  it('restores to a time: every write acknowledged by then is there, none sent after it', async () => {
    for (const pick of [0.2, 0.55, 0.9]) {
      const at = written[Math.floor(pick * written.length)]!.ackedAt;
      const into = join(await dirs.make(`r-time-${pick}`), 'data');
      await restoreFromArchive(archiveDir, into, { atMs: at });
      const rows = new Set(await restoredRows(into));
      for (const w of written) {
        if (w.ackedAt <= at) expect(rows.has(w.v), `${w.v} acknowledged at ${w.ackedAt} <= ${at}`).toBe(true);
        if (w.sentAt > at) expect(rows.has(w.v), `${w.v} sent at ${w.sentAt} > ${at}`).toBe(false);
      }
    }
  });

  it('refuses a target the archive does not reach, and a non-empty data directory, writing nothing', async () => {
    const into = join(await dirs.make('r-bad'), 'data');
    await expect(restoreFromArchive(archiveDir, into, { lsn: store.stats().lsn + 1 })).rejects.toThrow(/archive ends at lsn/);
    await expect(restoreFromArchive(archiveDir, into, { atMs: 0 })).rejects.toThrow(/holds nothing acknowledged at or before/);
    await expect(readdir(into)).rejects.toThrow(/ENOENT/);
    const full = await dirs.make('r-full');
    await writeFile(join(full, 'x'), 'x');
    await expect(restoreFromArchive(archiveDir, full)).rejects.toThrow(/is not empty/);
  });
});

describe('an archive that cannot be written, or has a hole, or is another store\'s', () => {
  it('leaves the store serving while it cannot be written, reports it, and catches up after', async () => {
    const archiveDir = join(await dirs.make('away'), 'archive');
    const store = await open(await dirs.make('live-away'), migrations, { archive: { dir: archiveDir, maxDelayMs: 20, retentionMs: 86_400_000 } });
    try {
      const written: Written[] = [];
      await writeRows(store, 20, 'before', written);
      await eventually(() => store.archiveStatus()!.archivedLsn === store.stats().lsn);
      // The archive's mount goes away: a file where the directory was (root ignores modes, not this).
      await rename(archiveDir, `${archiveDir}.away`);
      await writeFile(archiveDir, 'not a directory');
      const lsnBefore = store.stats().lsn;
      await writeRows(store, 10, 'during', written);
      await new Promise((r) => setTimeout(r, 40)); // two cuts at least: the second half is a segment of its own
      await writeRows(store, 10, 'during-2', written);
      const lsnDuring = store.stats().lsn;
      await eventually(() => store.archiveStatus()!.state === 'failing');
      expect(store.archiveStatus()!.lagBytes).toBeGreaterThan(0);
      await writeRows(store, 5, 'still-serving', written);
      await rm(archiveDir);
      await rename(`${archiveDir}.away`, archiveDir);
      await eventually(() => store.archiveStatus()!.state === 'ok' && store.archiveStatus()!.archivedLsn === store.stats().lsn, 20_000);
      // The segments that queued up went out as one file (one write and two fsyncs, not one per cut).
      const after = listArchive(await readdir(archiveDir)).segments.find((seg) => seg.fromLsn === lsnBefore + 1)!;
      expect(after.toLsn).toBeGreaterThanOrEqual(lsnDuring);
      const into = join(await dirs.make('r-away'), 'data');
      await restoreFromArchive(archiveDir, into);
      expect(await restoredRows(into)).toEqual(written.map((w) => w.v));
    } finally {
      await store.close();
    }
  });

  it('names a deleted segment as a gap and restores up to it only when asked', async () => {
    const archiveDir = await dirs.make('holed');
    const store = await open(await dirs.make('live-holed'), migrations, { archive: { dir: archiveDir, maxDelayMs: 20, retentionMs: 86_400_000 } });
    const written: Written[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        await writeRows(store, 10, `part${i}`, written);
        await eventually(() => store.archiveStatus()!.archivedLsn === store.stats().lsn);
        await new Promise((r) => setTimeout(r, 30)); // the next writes make a segment of their own
      }
    } finally {
      await store.close();
    }
    const listing = listArchive(await readdir(archiveDir));
    const victim = listing.segments.find((s) => s.fromLsn > listing.segments[0]!.toLsn && s.toLsn < listing.segments.at(-1)!.fromLsn)!;
    await rm(join(archiveDir, victim.name));
    const into = join(await dirs.make('r-holed'), 'data');
    // The snapshot of the clean stop holds everything; a restore to a point before it needs the segments.
    await expect(restoreFromArchive(archiveDir, into, { lsn: victim.toLsn })).rejects.toThrow(new RegExp(`gap: lsn ${victim.fromLsn} to ${victim.toLsn} is missing`));
    await expect(readdir(into)).rejects.toThrow(/ENOENT/);
    await restoreFromArchive(archiveDir, into, { lsn: victim.fromLsn - 1 });
    expect(await restoredRows(into)).toEqual(written.filter((w) => w.lsn < victim.fromLsn).map((w) => w.v));
  });

  it('refuses a damaged segment by name, writing nothing', async () => {
    const archiveDir = await dirs.make('damaged');
    const store = await open(await dirs.make('live-damaged'), migrations, { archive: { dir: archiveDir, maxDelayMs: 20, retentionMs: 86_400_000 } });
    await writeRows(store, 10, 'x', []);
    await store.close();
    const segment = listArchive(await readdir(archiveDir)).segments[0]!;
    const bytes = await readFile(join(archiveDir, segment.name));
    bytes[bytes.length - 50]! ^= 0xff;
    await writeFile(join(archiveDir, segment.name), bytes);
    const into = join(await dirs.make('r-damaged'), 'data');
    await expect(restoreFromArchive(archiveDir, into, { lsn: segment.fromLsn })).rejects.toThrow(new RegExp(`${segment.name} is not a usable archive file: its checksum does not match`));
    await expect(restoreFromArchive(archiveDir, into, { lsn: segment.fromLsn })).rejects.toThrow(ArchiveRestoreError);
    await expect(readdir(into)).rejects.toThrow(/ENOENT/);
  });

  it('refuses to write into an archive that is ahead of the store (another store\'s)', async () => {
    const archiveDir = await dirs.make('shared');
    const first = await open(await dirs.make('first'), migrations, { archive: { dir: archiveDir, maxDelayMs: 20, retentionMs: 86_400_000 } });
    await writeRows(first, 30, 'first', []);
    await first.close();
    const before = (await readdir(archiveDir)).sort();
    const second = await open(await dirs.make('second'), migrations, { archive: { dir: archiveDir, maxDelayMs: 20, retentionMs: 86_400_000 } });
    try {
      expect(second.archiveStatus()).toMatchObject({ state: 'refused', problem: expect.stringMatching(/new ARCHIVE_DIR/) });
      await writeRows(second, 5, 'second', []); // it serves all the same
      expect((await readdir(archiveDir)).sort()).toEqual(before);
    } finally {
      await second.close();
    }
  });
});
