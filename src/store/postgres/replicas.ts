/**
 * Streaming replicas for reads (DATABASE_REPLICA_URLS), in the manner of GitLab's and Shopify's
 * database load balancing: reads that tolerate bounded staleness go to a replica; a client that
 * just wrote reads from the primary until a replica has replayed its write; a replica that lags,
 * fails or stops being a replica is dropped until it recovers, and with none left reads go to the
 * primary.
 *
 * How far a replica is, without a query per read: every POLL_MS the primary's WAL position
 * (`pg_current_wal_lsn()`) is sampled, then each replica's `pg_last_wal_replay_lsn()`. A replica
 * whose replay reached the sample taken at time T holds every commit that ended before T
 * (`coveredUntil`); its lag is how long ago the newest sample it reached was taken (0 when it
 * reached the newest). A client whose last write ended at W may read from a replica with
 * coveredUntil > W, or from any usable replica once DATABASE_READ_YOUR_WRITES_MS has passed.
 * Writes are remembered per instance: behind a load balancer that spreads one client over
 * several instances, an instance that did not see the write relies on the time bound alone.
 */
import pg from 'pg';
import { StoreUnavailableError } from '../core/errors.ts';
import { redactDatabaseUrl, withUser } from './database.ts';
import { pgTypes } from './sql.ts';

export interface ReplicaSettings {
  urls: string[];
  readYourWritesMs: number;
  maxLagMs: number;
  poolMax: number;
  applicationName: string;
}

/** One replica as metrics and logs show it. */
export interface ReplicaStatus {
  /** `replica1`, `replica2`… in the order of DATABASE_REPLICA_URLS. */
  name: string;
  usable: boolean;
  /** Seconds behind the primary (null: never caught up with a sample, or unreachable). */
  lagSeconds: number | null;
  /** Read units it served. */
  reads: number;
}

export interface Replica {
  readonly name: string;
  readonly url: string;
  readonly pool: pg.Pool;
  readonly config: pg.ClientConfig;
  usable: boolean;
  inRecovery: boolean;
  coveredUntil: number;
  lagMs: number | null;
  reads: number;
  problem: string | null;
}

/** A WAL position `X/Y` as one number. */
function lsnValue(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

const SAMPLES = 512;

export class ReplicaSet {
  readonly replicas: Replica[];
  private readonly settings: ReplicaSettings;
  private readonly primaryLsn: () => Promise<string>;
  private readonly log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void;
  private readonly now: () => number;
  /** Primary WAL positions sampled, oldest first. */
  private readonly samples: Array<{ at: number; lsn: bigint }> = [];
  /** When each client's last write ended. */
  private readonly writes = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | null = null;
  /** Replica reads that went to the primary as no replica was usable, or the one chosen failed under them. */
  fallbacks = 0;
  /** Replica reads that went to the primary because the client's own write was not yet replayed (read-your-writes). */
  primaryReads = 0;

  constructor(
    settings: ReplicaSettings,
    primaryLsn: () => Promise<string>,
    log: (level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>) => void,
    now: () => number = () => Date.now(),
  ) {
    this.settings = settings;
    this.primaryLsn = primaryLsn;
    this.log = log;
    this.now = now;
    this.replicas = settings.urls.map((url, i) => {
      const config: pg.ClientConfig = {
        connectionString: withUser(url),
        application_name: `${settings.applicationName}-replica`,
        options: '-c TimeZone=UTC',
        types: pgTypes,
        connectionTimeoutMillis: Math.max(1000, settings.maxLagMs),
      };
      const pool = new pg.Pool({ ...config, pipeline: true, max: settings.poolMax, idleTimeoutMillis: 30_000 });
      const replica: Replica = { name: `replica${i + 1}`, url, pool, config, usable: false, inRecovery: false, coveredUntil: 0, lagMs: null, reads: 0, problem: null };
      pool.on('error', (err) => this.fail(replica, err));
      return replica;
    });
  }

  /** How often the positions are sampled: a fraction of the lag bound, so a lagging replica is dropped in time. */
  private get pollMs(): number {
    return Math.max(20, Math.min(250, Math.floor(this.settings.maxLagMs / 4)));
  }

  /**
   * Checks every replica once before the service starts: one that cannot be reached, is not in
   * recovery (the primary's own URL, or a promoted replica) or replicates another cluster refuses
   * the start, naming it; then samples in the background.
   */
  async start(primarySystemId: string): Promise<void> {
    for (const replica of this.replicas) {
      const where = `DATABASE_REPLICA_URLS: ${replica.name} (${redactDatabaseUrl(replica.url)})`;
      let row: { recovery: boolean; system: string };
      try {
        row = (await replica.pool.query<{ recovery: boolean; system: string }>('SELECT pg_is_in_recovery() AS recovery, system_identifier::text AS system FROM pg_control_system()')).rows[0]!;
      } catch (err) {
        throw new StoreUnavailableError(`${where} cannot be reached: ${(err as Error).message}`, { cause: err });
      }
      if (!row.recovery) throw new StoreUnavailableError(`${where} is not a replica: it is not in recovery (the primary's own URL, or a promoted replica)`);
      if (row.system !== primarySystemId) throw new StoreUnavailableError(`${where} replicates another cluster than DATABASE_URL's (system identifier ${row.system}, the primary's ${primarySystemId})`);
    }
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  /** One sample of the primary's position and every replica's replay; runs one at a time. */
  poll(): Promise<void> {
    this.polling ??= this.sample().finally(() => (this.polling = null));
    return this.polling;
  }

  private async sample(): Promise<void> {
    const at = this.now();
    let primary: bigint;
    try {
      primary = lsnValue(await this.primaryLsn());
    } catch {
      return; // the primary's own failures are reported by its requests
    }
    this.samples.push({ at, lsn: primary });
    if (this.samples.length > SAMPLES) this.samples.shift();
    await Promise.all(this.replicas.map((replica) => this.sampleReplica(replica, primary)));
    const horizon = this.now() - this.settings.readYourWritesMs;
    for (const [client, wroteAt] of this.writes) if (wroteAt < horizon) this.writes.delete(client);
  }

  private async sampleReplica(replica: Replica, primary: bigint): Promise<void> {
    let row: { recovery: boolean; lsn: string | null };
    try {
      row = (await replica.pool.query<{ recovery: boolean; lsn: string | null }>('SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS lsn')).rows[0]!;
    } catch (err) {
      this.fail(replica, err as Error);
      return;
    }
    replica.inRecovery = row.recovery;
    if (!row.recovery || row.lsn === null) {
      this.drop(replica, 'it is no longer in recovery (promoted?)');
      return;
    }
    const replay = lsnValue(row.lsn);
    for (let i = this.samples.length - 1; i >= 0; i--) {
      const sample = this.samples[i]!;
      if (sample.lsn <= replay) {
        if (sample.at > replica.coveredUntil) replica.coveredUntil = sample.at;
        break;
      }
    }
    const newest = this.samples[this.samples.length - 1]!;
    replica.lagMs = replay >= primary ? 0 : replica.coveredUntil === 0 ? null : newest.at - replica.coveredUntil;
    if (replica.lagMs === null || replica.lagMs > this.settings.maxLagMs) {
      this.drop(replica, `it lags more than DATABASE_REPLICA_MAX_LAG_MS (${this.settings.maxLagMs} ms)`);
      return;
    }
    if (!replica.usable) this.log('info', 'replica used for reads', { replica: replica.name, lagMs: replica.lagMs });
    replica.usable = true;
    replica.problem = null;
  }

  private drop(replica: Replica, why: string): void {
    if (replica.usable || replica.problem !== why) this.log('warn', `replica not used: ${why}`, { replica: replica.name });
    replica.usable = false;
    replica.problem = why;
  }

  /** A replica failed (a read under it, or a sample): dropped until a sample succeeds again. */
  fail(replica: Replica, err: Error): void {
    replica.lagMs = null;
    this.drop(replica, `it failed: ${err.message}`);
  }

  /** `client` wrote: its reads go to the primary until a replica has replayed the write, or the bound passes. */
  wrote(client: string): void {
    this.writes.set(client, this.now());
  }

  /** The replica for a read of `client`, or null (the primary): the usable one that has served fewest, among those holding the client's writes. */
  choose(client: string | null): Replica | null {
    const wroteAt = client === null ? undefined : this.writes.get(client);
    const fresh = wroteAt !== undefined && this.now() - wroteAt < this.settings.readYourWritesMs;
    let best: Replica | null = null;
    for (const replica of this.replicas) {
      if (!replica.usable || (fresh && replica.coveredUntil <= wroteAt!)) continue;
      if (best === null || replica.reads < best.reads) best = replica;
    }
    if (best === null) {
      if (this.replicas.some((r) => r.usable)) this.primaryReads++;
      else this.fallbacks++;
    }
    return best;
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({ name: r.name, usable: r.usable, lagSeconds: r.lagMs === null ? null : r.lagMs / 1000, reads: r.reads }));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.polling?.catch(() => {});
    await Promise.all(this.replicas.map((r) => r.pool.end().catch(() => {})));
  }
}
