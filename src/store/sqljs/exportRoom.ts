/**
 * Memory for a copy of the whole database (a checkpoint's snapshot, a backup), made ready before
 * the copy and outside the write queue. The copy itself runs in the queue, holding every request;
 * into fresh memory most of its time is the first touch of each page (the kernel finding and
 * zeroing it: 5 ms per MiB on the 2-core machines, 2.6 s for 550 MB), into touched memory it is a
 * plain copy. So the pages are touched here first, a few at a time between other work, and the
 * copy is then written into them (Connection.export with a room). The memory is the same the copy
 * took before, held a little longer; it is dropped with the image.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

const PAGE_BYTES = 4096;
/** Touched per turn of the event loop: about 1.3 ms at the cost above (2 MiB, 10 ms, held every request that long, turn after turn, for seconds). */
const TURN_BYTES = 256 * 1024;
/** What the database may grow by between sizing the room and the copy. */
const MARGIN_BYTES = 8 * 1024 * 1024;

/** A zeroed array with room for a database of `databaseBytes` and some growth, every page of it touched. */
export async function preparedExportRoom(databaseBytes: number): Promise<Uint8Array> {
  const room = new Uint8Array(databaseBytes + Math.max(MARGIN_BYTES, Math.ceil(databaseBytes / 32)));
  for (let start = 0; start < room.length; start += TURN_BYTES) {
    const end = Math.min(room.length, start + TURN_BYTES);
    // A write, not a read: reading an untouched page maps the shared zero page and costs the fault again later.
    for (let i = start; i < end; i += PAGE_BYTES) room[i] = 0;
    await nextTurn();
  }
  return room;
}
