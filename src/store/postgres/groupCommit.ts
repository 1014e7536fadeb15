/**
 * Group commit for autocommit INSERTs (a quote is one): concurrent units that insert one row with
 * the same statement text share one multi-row INSERT, so N callers cost PostgreSQL one statement,
 * one commit and one WAL flush, and the service one round trip, instead of N of each.
 *
 * - A row arriving while no group of its statement is in flight is sent at once, alone (no delay is
 *   added to a quiet service); rows arriving while one is in flight wait and leave together as the
 *   next statement the moment it finishes.
 * - Each caller resolves only once the statement holding its row has committed (synchronous_commit
 *   is untouched): nothing is acknowledged before it is durable.
 * - A multi-row INSERT commits all its rows or none. When PostgreSQL refuses one (a duplicate key,
 *   a constraint), nothing of it committed, so each row is sent again on its own and only the bad
 *   row's caller fails. A lost connection fails every caller of the group: whether it committed is
 *   unknown, and sending again could insert twice.
 * - A group is bounded in rows (GROUP_MAX_ROWS) and in parameters (PostgreSQL binds at most 65,535).
 * - Only `INSERT INTO t (columns) VALUES (?, …)` with nothing after the row qualifies: RETURNING,
 *   ON CONFLICT or a computed value would make one row's outcome depend on the others'.
 */
import pg from 'pg';
import { isConnectionFailure } from '../core/errors.ts';
import type { SqlParams, SqlValue } from '../store.ts';
import type { StatementSender } from './statements.ts';

/** Rows in one statement at most: past a few dozen the commit is no longer what a group saves, and each size is one prepared statement. */
const GROUP_MAX_ROWS = 64;
/** Bind parameters PostgreSQL takes in one statement (a 16-bit count in the protocol). */
const MAX_PARAMETERS = 65_535;

/** Statement texts looked at, at most (see lane()). */
const LANE_LIMIT = 500;

const PLAIN_INSERT = /^\s*(INSERT\s+INTO\s+[^()]+\([^()]*\))\s*VALUES\s*(\(\s*\?(?:\s*,\s*\?)*\s*\))\s*$/i;

interface Waiting {
  params: SqlParams;
  resolve(changes: number): void;
  reject(err: unknown): void;
}

/** The rows waiting for one statement text, and whether a group of it is in flight. */
export interface InsertLane {
  readonly sql: string;
  readonly width: number;
  readonly maxRows: number;
  readonly head: string;
  readonly row: string;
  /** The group statements' texts by row count, built once. */
  readonly texts: string[];
  inFlight: boolean;
  readonly waiting: Waiting[];
}

export interface GroupCommitStats {
  /** Rows that were sent in a statement with at least one other row. */
  groupedRows: number;
  /** The statements that carried them. */
  groupStatements: number;
  /** Groups PostgreSQL refused as a whole, whose rows were then sent one by one. */
  groupsSplit: number;
}

export class InsertGroups {
  private readonly lanes = new Map<string, InsertLane | null>();
  private readonly sender: StatementSender;
  private readonly connect: () => Promise<pg.PoolClient>;
  readonly stats: GroupCommitStats = { groupedRows: 0, groupStatements: 0, groupsSplit: 0 };

  constructor(sender: StatementSender, connect: () => Promise<pg.PoolClient>) {
    this.sender = sender;
    this.connect = connect;
  }

  /**
   * The lane of `sql` when a statement of it with these `params` may share a group; undefined
   * otherwise. A value the driver cannot bind is left to the statement alone, where it fails its
   * own caller rather than the group.
   */
  lane(sql: string, params: SqlParams | undefined): InsertLane | undefined {
    let lane = this.lanes.get(sql);
    if (lane === undefined) {
      const match = PLAIN_INSERT.exec(sql);
      const width = match ? match[2]!.split('?').length - 1 : 0;
      lane = match ? { sql, width, maxRows: Math.min(GROUP_MAX_ROWS, Math.floor(MAX_PARAMETERS / width)), head: match[1]!, row: match[2]!, texts: [], inFlight: false, waiting: [] } : null;
      // Repositories' statement texts are constants; a text built per call is not remembered past the limit.
      if (this.lanes.size < LANE_LIMIT) this.lanes.set(sql, lane);
    }
    return lane !== null && params?.length === lane.width && params.every(bindable) ? lane : undefined;
  }

  /** Inserts the row; resolves with the rows inserted (1) once the statement carrying it has committed. */
  insert(lane: InsertLane, params: SqlParams): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      lane.waiting.push({ params, resolve, reject });
      if (!lane.inFlight) void this.drain(lane);
    });
  }

  /** Sends the lane's waiting rows, a group at a time, until none wait. */
  private async drain(lane: InsertLane): Promise<void> {
    lane.inFlight = true;
    try {
      while (lane.waiting.length > 0) await this.send(lane, lane.waiting.splice(0, lane.maxRows));
    } finally {
      lane.inFlight = false;
    }
  }

  private async send(lane: InsertLane, group: Waiting[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.connect();
    } catch (err) {
      for (const w of group) w.reject(err);
      return;
    }
    let broken: Error | undefined;
    const alone = async (w: Waiting) => {
      try {
        w.resolve((await this.sender.autocommitStatement(client, lane.sql, w.params)).rowCount ?? 0);
      } catch (err) {
        if (isConnectionFailure(err)) broken = err as Error;
        w.reject(err);
      }
    };
    try {
      if (group.length === 1) return await alone(group[0]!);
      const params: SqlValue[] = [];
      for (const w of group) params.push(...w.params);
      try {
        await this.sender.autocommitStatement(client, groupText(lane, group.length), params);
      } catch (err) {
        if (!(err instanceof pg.DatabaseError) || isConnectionFailure(err)) throw err;
        // Refused whole, so nothing of it committed: each row alone, so that the bad one fails only its own caller.
        this.stats.groupsSplit++;
        await Promise.all(group.map(alone));
        return;
      }
      this.stats.groupStatements++;
      this.stats.groupedRows += group.length;
      for (const w of group) w.resolve(1);
    } catch (err) {
      if (isConnectionFailure(err)) broken = err as Error;
      for (const w of group) w.reject(err);
    } finally {
      client.release(broken);
    }
  }
}

/** What ./sql.ts pgParams binds without throwing. */
function bindable(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value instanceof Uint8Array;
}

/** The portable text of a group of `rows` rows (the sender numbers the placeholders and prepares it). */
function groupText(lane: InsertLane, rows: number): string {
  let text = lane.texts[rows];
  if (text === undefined) {
    text = `${lane.head} VALUES ${Array.from({ length: rows }, () => lane.row).join(', ')}`;
    lane.texts[rows] = text;
  }
  return text;
}
