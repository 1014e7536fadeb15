/**
 * A restore from the continuous archive, from archives put together file by file out of one real
 * store's archive: what it writes (the rows, the documents the database names), and each way an
 * archive is refused before anything is written.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeArchiveFile, encodeArchiveFile, type ArchiveHeader, type SegmentHeader } from '../../../../src/store/sqljs/archive/archiveFile.ts';
import { documentName, listArchive, segmentName, snapshotName } from '../../../../src/store/sqljs/archive/archivePlan.ts';
import { ArchiveRestoreError, restoreFromArchive } from '../../../../src/store/sqljs/archive/restoreArchive.ts';
import { eventually, migrationsDir, open, tempDirs, type TempDirs } from './storeTestUtils.ts';

let dirs: TempDirs;
let migrations: string;
/** The real archive's first snapshot (lsn 0, an empty image) and its whole journal as one body, from lsn 1 to `last`. */
let emptySnapshot: Buffer;
let journal: Buffer;
let last: number;
/** The snapshot of the real store's clean stop, at `last`. */
let lastSnapshot: Buffer;

beforeAll(async () => {
  dirs = await tempDirs();
  migrations = await migrationsDir(dirs, {
    '001_tables.sql': 'CREATE TABLE rows (id INTEGER PRIMARY KEY, v TEXT NOT NULL); CREATE TABLE documents (id TEXT PRIMARY KEY);',
  });
  const archiveDir = await dirs.make('source');
  const store = await open(await dirs.make('source-live'), migrations, { archive: { dir: archiveDir, maxDelayMs: 20, retentionMs: 86_400_000 } });
  for (const v of ['one', 'two', 'three']) await store.transaction((tx) => tx.run('INSERT INTO rows (v) VALUES (?)', [v]).then(() => undefined));
  await store.transaction(async (tx) => {
    for (const id of ['doc-1', 'doc-2', 'bad id']) await tx.run('INSERT INTO documents (id) VALUES (?)', [id]);
  });
  await eventually(() => store.archiveStatus()!.archivedLsn === store.stats().lsn);
  last = store.stats().lsn;
  await store.close();
  const listing = listArchive(await readdir(archiveDir));
  emptySnapshot = await readFile(join(archiveDir, listing.snapshots[0]!.name));
  lastSnapshot = await readFile(join(archiveDir, listing.snapshots.at(-1)!.name));
  const bodies = await Promise.all(listing.segments.map(async (s) => decodeArchiveFile(await readFile(join(archiveDir, s.name))).body));
  journal = Buffer.concat(bodies);
});
afterAll(() => dirs.cleanup());

const segmentHeader = (fromLsn: number, toLsn: number, extra: Partial<SegmentHeader> = {}): SegmentHeader => ({
  kind: 'segment',
  fromLsn,
  toLsn,
  startsNumbering: true,
  acks: [[toLsn, 3_000]],
  ...extra,
});

/** An archive directory holding these files (name → bytes). */
async function archive(name: string, files: Record<string, Buffer>): Promise<string> {
  const dir = await dirs.make(`archive-${name}`);
  for (const [file, bytes] of Object.entries(files)) await writeFile(join(dir, file), bytes);
  return dir;
}

const emptyAt = (lsn: number, atMs: number) => ({ [snapshotName(lsn, atMs)]: encodeArchiveFile({ kind: 'snapshot', lsn, atMs }, decodeArchiveFile(emptySnapshot).body) });
const file = (header: ArchiveHeader, body: Buffer) => encodeArchiveFile(header, body);

/** Restores and expects a refusal with `message`, and nothing written. */
async function refused(archiveDir: string, message: string | RegExp, target = {}): Promise<void> {
  const into = join(await dirs.make(`into-${Math.random().toString(36).slice(2)}`), 'data');
  const attempt = restoreFromArchive(archiveDir, into, target);
  await expect(attempt).rejects.toThrow(ArchiveRestoreError);
  await expect(attempt).rejects.toThrow(message);
  await expect(readdir(into)).rejects.toThrow(/ENOENT/);
}

async function rowsIn(dataDir: string): Promise<string[]> {
  const store = await open(dataDir, migrations);
  try {
    return (await store.read((db) => db.all<{ v: string }>('SELECT v FROM rows ORDER BY id'))).map((r) => r.v);
  } finally {
    await store.close();
  }
}

describe('a restore from the archive', () => {
  it('replays the journal over the snapshot into a new directory, with the documents archived and the names of those missing', async () => {
    const dir = await archive('whole', {
      ...emptyAt(0, 1_000),
      [segmentName(1, last, 3_000)]: file(segmentHeader(1, last), journal),
      [documentName('doc-1')]: file({ kind: 'document', id: 'doc-1', atMs: 2_000 }, Buffer.from('the first document')),
      // An id that is no document id is never a name to write under, whatever the archive holds.
      [documentName('bad id')]: file({ kind: 'document', id: 'doc-x', atMs: 2_000 }, Buffer.from('elsewhere')),
    });
    const into = join(await dirs.make('whole'), 'several', 'levels', 'data');
    const restored = await restoreFromArchive(dir, into);
    expect(restored).toEqual({ dataDir: into, lsn: last, snapshotLsn: 0, segments: 1, documents: 1, missingDocuments: ['doc-2', 'bad id'] });
    expect(await readdir(join(into, 'documents'))).toEqual(['doc-1']);
    expect((await stat(join(into, 'documents'))).mode & 0o077).toBe(0); // documents are the applicants': the owner's only
    expect(await readFile(join(into, 'documents', 'doc-1'), 'utf8')).toBe('the first document');
    expect(await rowsIn(into)).toEqual(['one', 'two', 'three']);
  });

  it('restores an empty snapshot alone: nothing to replay, no documents directory', async () => {
    const dir = await archive('empty', emptyAt(0, 1_000));
    const into = await dirs.make('empty-into'); // an empty directory is as good as a new one
    expect(await restoreFromArchive(dir, into)).toEqual({ dataDir: into, lsn: 0, snapshotLsn: 0, segments: 0, documents: 0, missingDocuments: [] });
    expect((await readdir(into)).sort()).not.toContain('documents');
  });

  it('restores to a moment when only the snapshot was taken (lsn 0), reading the straddling segment\'s marks', async () => {
    const dir = await archive('moment', { ...emptyAt(0, 1_000), [segmentName(1, last, 3_000)]: file(segmentHeader(1, last, { acks: [[2, 2_500], [last, 3_000]] }), journal) });
    const into = join(await dirs.make('moment'), 'data');
    expect((await restoreFromArchive(dir, into, { atMs: 1_000 })).lsn).toBe(0);
    const later = join(await dirs.make('moment-later'), 'data');
    expect((await restoreFromArchive(dir, later, { atMs: 2_600 })).lsn).toBe(2);
  });

  it('refuses a non-empty directory, naming up to three of its files', async () => {
    const dir = await archive('nonempty', emptyAt(0, 1_000));
    const one = await dirs.make('one-file');
    await writeFile(join(one, 'x'), 'x');
    await expect(restoreFromArchive(dir, one)).rejects.toThrow(new ArchiveRestoreError(`${one} is not empty (x); restore into an empty or new directory`));
    const three = await dirs.make('three-files');
    for (const name of ['a', 'b', 'c']) await writeFile(join(three, name), name);
    await expect(restoreFromArchive(dir, three)).rejects.toThrow(/is not empty \([a-c], [a-c], [a-c]\); restore into/);
    const four = await dirs.make('four-files');
    for (const name of ['a', 'b', 'c', 'd']) await writeFile(join(four, name), name);
    await expect(restoreFromArchive(dir, four)).rejects.toThrow(new RegExp(`is not empty \\([a-d], [a-d], [a-d], …\\); restore into`));
  });

  it('refuses an archive it cannot read, or that holds nothing', async () => {
    const missing = join(await dirs.make('no-archive'), 'archive');
    await refused(missing, new RegExp(`^cannot read the archive ${missing}: ENOENT$`));
    const empty = await archive('nothing', {});
    await refused(empty, `${empty}: the archive holds no snapshot and no segment. Nothing was restored.`);
  });

  it('refuses a file whose header does not match its name', async () => {
    const snapshotAs = (header: ArchiveHeader) => archive(`snap-${Math.random()}`, { [snapshotName(0, 1_000)]: file(header, decodeArchiveFile(emptySnapshot).body) });
    await refused(await snapshotAs({ kind: 'snapshot', lsn: 3, atMs: 1_000 }), `${snapshotName(0, 1_000)}: its header does not match its name`);
    await refused(await snapshotAs(segmentHeader(0, 0)), `${snapshotName(0, 1_000)}: its header does not match its name`);
    const name = segmentName(1, last, 3_000);
    for (const header of [segmentHeader(2, last), segmentHeader(1, last - 1), { kind: 'snapshot', lsn: 1, atMs: 3_000 } as const]) {
      await refused(await archive(`seg-${Math.random()}`, { ...emptyAt(0, 1_000), [name]: file(header, journal) }), `${name}: its header does not match its name`);
    }
  });

  it('refuses a first segment that continues another\'s numbering (another store\'s archive)', async () => {
    const name = segmentName(1, last, 3_000);
    const dir = await archive('continues', { ...emptyAt(0, 1_000), [name]: file(segmentHeader(1, last, { startsNumbering: false }), journal) });
    await refused(dir, `${name} does not start a replay after the snapshot at lsn 0 (the archive was written by another store?)`);
  });

  it('refuses a journal with bytes after its last record, or a damaged record before a whole one', async () => {
    const tail = await archive('tail', { ...emptyAt(0, 1_000), [segmentName(1, last, 3_000)]: file(segmentHeader(1, last), Buffer.concat([journal, Buffer.alloc(3)])) });
    await refused(tail, `the archived journal after lsn 0 cannot be read: 3 bytes after the last whole record. Nothing was restored.`);
    const damaged = Buffer.from(journal);
    damaged[10]! ^= 0xff;
    const holed = await archive('damaged', { ...emptyAt(0, 1_000), [segmentName(1, last, 3_000)]: file(segmentHeader(1, last), damaged) });
    await refused(holed, /the archived journal after lsn 0 cannot be read: the archived journal: damaged record at byte 0/);
  });

  it('refuses a snapshot whose image holds another LSN than its name', async () => {
    await refused(await archive('snap-lsn', emptyAt(5, 1_000)), `${snapshotName(5, 1_000)} holds lsn 0, not the 5 its name says`);
  });

  it('refuses a journal that does not follow the snapshot, or ends before its name says', async () => {
    const snapshotAtLast = { [snapshotName(last, 5_000)]: lastSnapshot };
    const after = await archive('jumps', { ...snapshotAtLast, [segmentName(last + 1, last + 2, 6_000)]: file(segmentHeader(last + 1, last + 2), journal) });
    await refused(after, `the archived journal jumps from lsn ${last} to 1`);
    const short = await archive('short', { ...emptyAt(0, 1_000), [segmentName(1, last + 2, 3_000)]: file(segmentHeader(1, last + 2), journal) });
    await refused(short, `the archived journal ends at lsn ${last}, before lsn ${last + 2}`);
  });

  it('refuses a document file holding another document, or no document', async () => {
    const base = { ...emptyAt(0, 1_000), [segmentName(1, last, 3_000)]: file(segmentHeader(1, last), journal) };
    const name = documentName('doc-1');
    for (const header of [{ kind: 'document', id: 'doc-2', atMs: 2_000 } as const, { kind: 'snapshot', lsn: 0, atMs: 2_000 } as const]) {
      await expect(restoreFromArchive(await archive(`doc-${Math.random()}`, { ...base, [name]: file(header, Buffer.from('x')) }), join(await dirs.make(`doc-into-${Math.random()}`), 'data'))).rejects.toThrow(
        new ArchiveRestoreError(`${name}: its header does not match its name`),
      );
    }
  });

  it('refuses a restore to a moment whose straddling file holds no segment', async () => {
    const name = segmentName(1, last, 3_000);
    const dir = await archive('straddle', { ...emptyAt(0, 1_000), [name]: file({ kind: 'snapshot', lsn: last, atMs: 3_000 }, journal) });
    await refused(dir, `${name} does not hold a segment`, { atMs: 2_000 });
  });
});
