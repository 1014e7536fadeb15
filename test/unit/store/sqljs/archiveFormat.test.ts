/**
 * The continuous archive's file frame and the plans made from its names alone, without a store:
 * which files are refused and why, which names are archive files, and which files a restore to a
 * point or retention picks.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ArchiveFileError, decodeArchiveFile, encodeArchiveFile, type ArchiveHeader } from '../../../../src/store/sqljs/archive/archiveFile.ts';
import {
  documentName,
  listArchive,
  lsnByNames,
  restorePlan,
  retentionPlan,
  segmentName,
  snapshotName,
} from '../../../../src/store/sqljs/archive/archivePlan.ts';

const MAGIC = Buffer.from('MOSARC1\n', 'latin1');

/** A frame as encodeArchiveFile lays it out, from raw header bytes (so a test can put anything there). */
function frame(headerBytes: Buffer, body: Buffer = Buffer.alloc(0)): Buffer {
  const headerLength = Buffer.alloc(4);
  headerLength.writeUInt32BE(headerBytes.length);
  const bodyLength = Buffer.alloc(8);
  bodyLength.writeBigUInt64BE(BigInt(body.length));
  const content = Buffer.concat([MAGIC, headerLength, headerBytes, bodyLength, body]);
  return Buffer.concat([content, createHash('sha256').update(content).digest()]);
}

/** A whole, correctly summed file around a header that may not be one. */
const withHeader = (header: unknown) => encodeArchiveFile(header as ArchiveHeader, Buffer.from('body'));

describe('an archive file is refused, naming why', () => {
  const segment = { kind: 'segment', fromLsn: 5, toLsn: 9, startsNumbering: true, acks: [[9, 1_000]] };
  const file = withHeader(segment);

  it('shorter than the smallest frame', () => {
    const short = Buffer.concat([MAGIC, Buffer.alloc(43)]);
    expect(() => decodeArchiveFile(short)).toThrow(new ArchiveFileError('it is 51 bytes, shorter than any archive file (cut short?)'));
  });

  it('the smallest frame (an empty header) is read as far as its header', () => {
    expect(frame(Buffer.alloc(0))).toHaveLength(52);
    expect(() => decodeArchiveFile(frame(Buffer.alloc(0)))).toThrow(new ArchiveFileError('its header is not JSON'));
    expect(() => decodeArchiveFile(frame(Buffer.from('{"kind":')))).toThrow(new ArchiveFileError('its header is not JSON'));
  });

  it('of another format', () => {
    const other = Buffer.from(file);
    other[0] = 'X'.charCodeAt(0);
    expect(() => decodeArchiveFile(other)).toThrow(new ArchiveFileError('it does not start with the archive format MOSARC1'));
  });

  it('whose header length runs past the end, by one byte or by far', () => {
    const headerLength = file.readUInt32BE(8);
    for (const claimed of [file.length - 52 + 1, headerLength + 20, 0xffff_ffff]) {
      const damaged = Buffer.from(file);
      damaged.writeUInt32BE(claimed, 8);
      expect(() => decodeArchiveFile(damaged), String(claimed)).toThrow(new ArchiveFileError(`its header length (${claimed}) runs past the end of the file (cut short?)`));
    }
  });

  it('whose header length is over 1 MiB, even in a file that long; a header of 1 MiB is read', () => {
    const padded = (bytes: number) => {
      const base = JSON.stringify({ kind: 'snapshot', lsn: 1, atMs: 2, pad: '' });
      return Buffer.from(JSON.stringify({ kind: 'snapshot', lsn: 1, atMs: 2, pad: 'x'.repeat(bytes - base.length) }));
    };
    expect(decodeArchiveFile(frame(padded(1024 * 1024))).header).toMatchObject({ kind: 'snapshot', lsn: 1, atMs: 2 });
    expect(() => decodeArchiveFile(frame(padded(1024 * 1024 + 1)))).toThrow(new ArchiveFileError('its header length (1048577) runs past the end of the file (cut short?)'));
  });

  it('whose header is not an object', () => {
    for (const header of [null, 5, 'segment', []]) {
      expect(() => decodeArchiveFile(withHeader(header)), JSON.stringify(header)).toThrow(new ArchiveFileError('its header does not describe a segment or a snapshot'));
    }
  });

  it('whose header is of no kind the archive writes', () => {
    expect(() => decodeArchiveFile(withHeader({ ...segment, kind: 'checkpoint' }))).toThrow(new ArchiveFileError('its header does not describe a segment or a snapshot'));
  });

  it('whose segment header has a field out of its range', () => {
    const bad: Array<Record<string, unknown>> = [
      { fromLsn: -1 },
      { fromLsn: 1.5 },
      { toLsn: '9' },
      { toLsn: -1 },
      { fromLsn: 10 }, // after toLsn
      { startsNumbering: 'yes' },
      { acks: {} },
      { acks: [[9]] },
      { acks: [[9, 1_000, 3]] },
      { acks: [[9, 1_000], [9]] },
      { acks: [[-1, 1_000]] },
      { acks: [[9, 1.5]] },
      { acks: [[1.5, 1_000]] },
      { acks: ['91'] },
    ];
    for (const change of bad) {
      expect(() => decodeArchiveFile(withHeader({ ...segment, ...change })), JSON.stringify(change)).toThrow(ArchiveFileError);
    }
    expect(decodeArchiveFile(withHeader({ ...segment, fromLsn: 9, acks: [] })).header).toEqual({ ...segment, fromLsn: 9, acks: [] });
  });

  it('whose snapshot or document header has a field out of its range; a whole one is read', () => {
    const snapshot = { kind: 'snapshot', lsn: 20, atMs: 3_500 };
    expect(decodeArchiveFile(withHeader(snapshot)).header).toEqual(snapshot);
    for (const change of [{ lsn: -1 }, { lsn: 1.5 }, { atMs: -1 }, { atMs: '3500' }]) {
      expect(() => decodeArchiveFile(withHeader({ ...snapshot, ...change })), JSON.stringify(change)).toThrow(ArchiveFileError);
    }
    const document = { kind: 'document', id: 'doc-01J0000000000000000000000', atMs: 4_000 };
    expect(decodeArchiveFile(withHeader(document))).toEqual({ header: document, body: Buffer.from('body') });
    for (const change of [{ id: '../snapshot.db' }, { id: 7 }, { id: '' }, { id: 'd'.repeat(65) }, { atMs: -1 }]) {
      expect(() => decodeArchiveFile(withHeader({ ...document, ...change })), JSON.stringify(change)).toThrow(ArchiveFileError);
    }
  });
});

describe('the archive\'s names', () => {
  it('a document\'s file is named after its id, and plans leave it out', () => {
    expect(documentName('doc-1')).toBe('document-doc-1.mosarc');
    expect(listArchive([documentName('doc-1'), snapshotName(0, 1_000)])).toEqual({ snapshots: [{ name: snapshotName(0, 1_000), lsn: 0, atMs: 1_000 }], segments: [] });
  });

  it('are listed in LSN order whatever order the directory gives, ties by time and by range', () => {
    const listing = listArchive([
      segmentName(11, 20, 3_000),
      snapshotName(20, 5_000),
      segmentName(1, 10, 2_000),
      snapshotName(20, 3_500),
      segmentName(1, 5, 1_500),
      snapshotName(0, 1_000),
      segmentName(9, 3, 1_000), // a range that runs backwards is no segment
    ]);
    expect(listing.snapshots.map((s) => [s.lsn, s.atMs])).toEqual([[0, 1_000], [20, 3_500], [20, 5_000]]);
    expect(listing.segments.map((s) => [s.fromLsn, s.toLsn, s.lastAckMs])).toEqual([[1, 5, 1_500], [1, 10, 2_000], [11, 20, 3_000]]);
  });
});

describe('a restore plan', () => {
  const listing = listArchive([snapshotName(0, 1_000), segmentName(1, 10, 2_000), segmentName(11, 20, 3_000), snapshotName(20, 3_500), segmentName(21, 30, 4_000)]);

  it('starts from a snapshot at exactly the target, with no segment', () => {
    expect(restorePlan(listing, 20)).toEqual({ snapshot: { name: snapshotName(20, 3_500), lsn: 20, atMs: 3_500 }, segments: [], toLsn: 20 });
    expect(restorePlan(listArchive([snapshotName(0, 1_000)]))).toMatchObject({ snapshot: { lsn: 0 }, segments: [], toLsn: 0 });
  });

  it('is refused for an empty archive, or a target before its first snapshot', () => {
    expect(() => restorePlan(listArchive([]))).toThrow('the archive holds no snapshot and no segment');
    expect(() => restorePlan(listArchive([segmentName(1, 10, 2_000)]))).toThrow('the archive has no snapshot at or before lsn 10 (it holds no snapshot)');
    expect(() => restorePlan(listArchive([snapshotName(20, 3_500), segmentName(1, 10, 2_000), segmentName(11, 20, 3_000)]), 15)).toThrow(
      'the archive has no snapshot at or before lsn 15 (its first is at lsn 20)',
    );
  });

  it('names the gap, and the last LSN it can restore to', () => {
    const holed = listArchive([snapshotName(0, 1_000), segmentName(1, 10, 2_000), segmentName(21, 30, 4_000)]);
    expect(() => restorePlan(holed)).toThrow(
      'the archive has a gap: lsn 11 to 20 is missing (a segment deleted or never written), so it cannot restore past lsn 10. ' +
        'Restore to --to-lsn 10 or earlier, or to a point after the gap that a later snapshot covers',
    );
    // The missing range runs to the end of the segments: only a later snapshot reaches past it.
    const cut = listArchive([snapshotName(0, 1_000), segmentName(1, 10, 2_000), snapshotName(30, 5_000)]);
    expect(() => restorePlan(cut, 25)).toThrow('the archive has a gap: lsn 11 onwards is missing');
    expect(restorePlan(cut, 30).snapshot.lsn).toBe(30);
  });
});

describe('the LSN of a moment, by names', () => {
  const listing = listArchive([snapshotName(0, 1_000), segmentName(1, 10, 2_000), segmentName(11, 20, 3_000), snapshotName(20, 3_500), segmentName(21, 30, 4_000)]);

  it('counts a snapshot taken, or a segment acknowledged, at or before the moment; the next segment straddles it', () => {
    expect(lsnByNames(listing, 1_000)).toEqual({ lsn: 0, straddling: listing.segments[0] });
    expect(lsnByNames(listing, 2_000)).toEqual({ lsn: 10, straddling: listing.segments[1] });
    expect(lsnByNames(listing, 5_000)).toEqual({ lsn: 30, straddling: null });
    expect(lsnByNames(listArchive([snapshotName(0, 1_000), snapshotName(20, 3_500)]), 4_000)).toEqual({ lsn: 20, straddling: null });
  });

  it('holds nothing before the first file, and no segment straddles then', () => {
    expect(lsnByNames(listing, 500)).toEqual({ lsn: -1, straddling: null });
  });
});

describe('retention', () => {
  it('deletes an older snapshot of the same LSN as the base (a checkpoint with no write between)', () => {
    const listing = listArchive([snapshotName(0, 1_000), segmentName(1, 20, 3_000), snapshotName(20, 3_500), snapshotName(20, 5_000), segmentName(21, 30, 6_500)]);
    expect(retentionPlan(listing, 6_000, 500)).toEqual([snapshotName(0, 1_000), snapshotName(20, 3_500), segmentName(1, 20, 3_000)]);
  });

  it('deletes nothing while no snapshot is older than the window', () => {
    const listing = listArchive([snapshotName(0, 1_000), segmentName(1, 20, 3_000)]);
    expect(retentionPlan(listing, 1_500, 1_000)).toEqual([]);
  });
});
