/**
 * `COPY (SELECT …) TO STDOUT` for text that PostgreSQL writes itself (the CSV export's lines):
 * the rows reach the service as bytes and leave it as bytes, never becoming JavaScript values.
 *
 * - The binary COPY format is read, not the text or CSV ones: those escape or quote what a line
 *   holds (a backslash, the CR of a CRLF line end), so their bytes are not the value's. In the
 *   binary format a one-column row is its value's bytes behind a 6-byte frame (field count and
 *   length), which `BinaryCopyText` strips.
 * - COPY runs on connections of its own: node-postgres refuses custom query classes
 *   (pg-copy-streams) on a pipelined connection, which the engine's pool is.
 * - Backpressure: pg-copy-streams stops reading the socket while its consumer does not read, so
 *   PostgreSQL blocks on a full socket and memory stays flat.
 * - A COPY left before its end is still sending: the connection is dropped (released with an
 *   error), which makes the server's next write fail and end the query.
 */
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

/** Rows' text back to back, and how many rows it holds. */
export interface CopiedText {
  bytes: Buffer;
  rows: number;
}

/** PGCOPY\n\377\r\n\0, then 32-bit flags and the header extension's length. */
const SIGNATURE = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]);
const HEADER_BYTES = SIGNATURE.length + 8;
/** A row's frame: a 16-bit field count, then the field's 32-bit length. */
const FRAME_BYTES = 6;
const TRAILER = -1;

/**
 * Reads a binary COPY of one text column, chunk by chunk as they arrive (a row may span chunks):
 * each chunk gives the values of the rows it completes, back to back. A chunk given to `take` is
 * the reader's: the values are written into it.
 * https://www.postgresql.org/docs/15/sql-copy.html#id-1.9.3.55.9.4
 */
export class BinaryCopyText {
  private pending: Buffer | null = null;
  private headerRead = false;
  private ended = false;

  take(chunk: Buffer): CopiedText {
    if (this.ended) throw new Error('binary COPY data after its trailer');
    const buf = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    let pos = 0;
    if (!this.headerRead) {
      if (buf.length < HEADER_BYTES) return this.keep(buf, 0);
      if (!buf.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
      const extension = buf.readInt32BE(SIGNATURE.length + 4);
      if (buf.length < HEADER_BYTES + extension) return this.keep(buf, 0);
      pos = HEADER_BYTES + extension;
      this.headerRead = true;
    }
    // The values are moved to the front of the chunk, each behind the last (never past where it is
    // read from): the chunk is this reader's (pg-copy-streams hands over each one once), and no
    // buffer is allocated per chunk, which on a million rows the garbage collector would pay for.
    const out = buf;
    let written = 0;
    let rows = 0;
    while (pos + 2 <= buf.length) {
      const fields = buf.readInt16BE(pos);
      if (fields === TRAILER) {
        this.ended = true;
        pos += 2;
        if (pos !== buf.length) throw new Error('binary COPY data after its trailer');
        break;
      }
      if (fields !== 1) throw new Error(`binary COPY row of ${fields} fields; one text column expected`);
      if (pos + FRAME_BYTES > buf.length) break;
      const length = buf.readInt32BE(pos + 2);
      if (length < 0) throw new Error('binary COPY row with a NULL value; a text value expected');
      const end = pos + FRAME_BYTES + length;
      if (end > buf.length) break;
      written += buf.copy(out, written, pos + FRAME_BYTES, end);
      rows++;
      pos = end;
    }
    if (pos < buf.length) this.pending = buf.subarray(pos);
    return { bytes: out.subarray(0, written), rows };
  }

  private keep(buf: Buffer, rows: number): CopiedText {
    this.pending = buf;
    return { bytes: Buffer.alloc(0), rows };
  }

  /** Throws unless the stream ended with its trailer, nothing left over. */
  finish(): void {
    if (!this.ended || this.pending !== null) throw new Error('binary COPY stream ended before its trailer');
  }
}

/**
 * Pieces held until they make one worth a write. PostgreSQL sends a row per CopyData message and
 * the socket hands them on as they come, often a few KiB at a time; each piece forwarded is a
 * write to the client's socket, and on loopback a write costs mostly per call (measured on a
 * 1,000,000-record export: the writes were 30 % of the service's CPU at socket-sized pieces, 21 %
 * at 256 KiB). The first piece goes on alone, so that the first record is not held back.
 */
export const PIECE_BYTES = 256 * 1024;

export class HeldPieces {
  private pieces: Buffer[] = [];
  private bytes = 0;
  private first = true;
  rows = 0;

  /** Holds `piece`; true when what is held should go on now. */
  add(piece: CopiedText): boolean {
    this.pieces.push(piece.bytes);
    this.bytes += piece.bytes.length;
    this.rows += piece.rows;
    return this.first || this.bytes >= PIECE_BYTES;
  }

  /** What is held, as one piece; nothing is held after. */
  take(): CopiedText {
    const piece = { bytes: this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.bytes), rows: this.rows };
    this.pieces = [];
    this.bytes = 0;
    this.rows = 0;
    this.first = false;
    return piece;
  }
}

/** Connections for COPY: an export at a time each, so a few. */
const COPY_CONNECTIONS = 4;

export class CopyOutPool {
  private readonly pool: pg.Pool;
  private readonly onError: (err: Error) => void;

  /**
   * `workers`: parallel workers one export may add to its backend (DATABASE_EXPORT_WORKERS). The
   * lines' text is computed where the rows are read, so with one worker a big export's formatting
   * runs on two cores of the database (measured 1.1–1.35× the records a second with one, on 2
   * cores); 0 keeps an export to one core. PostgreSQL plans workers only for big exports and only
   * while its max_parallel_workers has some free.
   */
  constructor(config: pg.ClientConfig, onError: (err: Error) => void, workers: number) {
    // JIT compiles the line's expressions but neither optimises nor inlines them: both start on a big
    // export's cost, and over 1,000,000 lines cost more backend CPU than they saved (3.28 against
    // 3.17 µs a line, docs/operators/postgresql-performance.md).
    const options = `${config.options ?? ''} -c max_parallel_workers_per_gather=${workers} -c jit_optimize_above_cost=-1 -c jit_inline_above_cost=-1`.trim();
    this.pool = new pg.Pool({ ...config, options, max: COPY_CONNECTIONS, idleTimeoutMillis: 30_000 });
    this.onError = onError;
    // An idle connection that the server dropped must not crash the process.
    this.pool.on('error', onError);
  }

  /** The text of `select` (one text column, never NULL), rows in its order, as PostgreSQL sends them. */
  async *text(select: string): AsyncGenerator<CopiedText> {
    const client = await this.pool.connect();
    // pg-pool takes its own 'error' listener off a lent client: without one, a dropped connection would crash the process.
    client.on('error', this.onError);
    let complete = false;
    try {
      const stream = client.query(copyTo(`COPY (${select}) TO STDOUT (FORMAT binary)`));
      // Reported through the iteration below; once it is left, the error of the dropped connection has no one to tell.
      stream.on('error', () => {});
      const reader = new BinaryCopyText();
      const held = new HeldPieces();
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        const piece = reader.take(chunk);
        if (piece.rows > 0 && held.add(piece)) yield held.take();
      }
      reader.finish();
      if (held.rows > 0) yield held.take();
      complete = true;
    } finally {
      client.removeListener('error', this.onError);
      client.release(complete ? undefined : new Error('COPY left before its end'));
    }
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
