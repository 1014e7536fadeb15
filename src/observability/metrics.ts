/**
 * The service's Prometheus metrics (prom-client), in a registry of their own per app context:
 * tests build several apps in one process, and each must count only its own requests.
 *
 * Every label takes values from a set fixed by the code or the contract (an operationId, a method,
 * a status class, an engine, an outcome, a built-in export format, a refusal code), never from a
 * path, an account, a key or an id: the number of series does not grow with the data
 * (test/api/metrics.test.ts holds it). docs/operators/metrics.md lists every metric.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from 1 ms (a quote) to 10 s (a slow partner). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: store work is finer (a sql.js transaction takes tens of microseconds). */
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
/** Seconds: checkpoints and snapshots of a database that may be hundreds of megabytes. */
const CHECKPOINT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the gauges read at scrape time, each optional (absent: the gauge is not exported). */
export interface MetricSources {
  /** Pending webhook deliveries and when the oldest of them was created (null: none). */
  outboxBacklog?(): Promise<{ pending: number; oldestCreatedAt: string | null }>;
  /** sql.js: 'degraded' while the disk refuses writes. */
  storageState?(): 'ok' | 'degraded' | 'closed';
  /** sql.js: the database's size in memory. */
  databaseBytes?(): number;
  /** sql.js with ARCHIVE_DIR: the continuous archive's state, lag and last success (null: not archiving). */
  archive?(): { state: 'ok' | 'failing' | 'refused'; lastSuccessMs: number | null; lagBytes: number; lagSeconds: number } | null;
  /** PostgreSQL: the pool's connections and the callers waiting for one. */
  pool?(): { total: number; idle: number; waiting: number };
  /** PostgreSQL with DATABASE_REPLICA_URLS: each replica, and the replica reads that went to the primary. */
  replicas?(): ReplicaSources;
  now(): number;
}

type ReplicaSources = { replicas: Array<{ name: string; usable: boolean; lagSeconds: number | null; reads: number }>; readYourWrites: number; fallbacks: number };

/** `2xx` … `5xx` for a status code. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'mos_http_request_duration_seconds',
    help: 'API requests (/v1) by operationId (or "unrouted"), method and status class: duration until the handler returned; _count counts them.',
    labelNames: ['operation', 'method', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly dashboardRequests = new Counter({
    name: 'mos_dashboard_requests_total',
    help: 'Dashboard requests (/dashboard) by method and status class.',
    labelNames: ['method', 'status_class'] as const,
    registers: [this.registry],
  });

  readonly storeTransactionDuration = new Histogram({
    name: 'mos_store_transaction_duration_seconds',
    help: 'Store units of work (kind transaction or read) by engine and outcome (commit or rollback), from the call to durable commit (queue wait and fsync included).',
    labelNames: ['engine', 'kind', 'outcome'] as const,
    buckets: STORE_BUCKETS,
    registers: [this.registry],
  });

  readonly storePhaseDuration = new Histogram({
    name: 'mos_store_phase_duration_seconds',
    help: 'Parts of the store engines\' work: journal_flush (sql.js: write and fsync of a group of commits), pool_wait, query and commit (PostgreSQL).',
    labelNames: ['engine', 'phase'] as const,
    buckets: STORE_BUCKETS,
    registers: [this.registry],
  });

  readonly checkpointDuration = new Histogram({
    name: 'mos_store_checkpoint_duration_seconds',
    help: 'sql.js checkpoints (kind checkpoint: the whole of it) and the snapshot file each writes (kind snapshot: write, fsync, rename).',
    labelNames: ['kind'] as const,
    buckets: CHECKPOINT_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'mos_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (will be tried again), gone (410: endpoint disabled), abandoned (shutdown).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveryDuration = new Histogram({
    name: 'mos_webhook_delivery_duration_seconds',
    help: 'Time from sending a webhook delivery to its answer (or failure), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly bankPartnerCalls = new Counter({
    name: 'mos_bank_partner_calls_total',
    help: 'Calls to bank partners (with their retries) by call (introspect, account) and outcome (answered, bad_response, unavailable).',
    labelNames: ['call', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly bankPartnerCallDuration = new Histogram({
    name: 'mos_bank_partner_call_duration_seconds',
    help: 'Duration of bank partner calls, retries included, by call and outcome.',
    labelNames: ['call', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly exports = new Counter({
    name: 'mos_exports_total',
    help: 'Mortgage exports streamed, by base format (json, ndjson, csv, mismo) and outcome (finished, client_gone, failed).',
    labelNames: ['format', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly exportRows = new Counter({
    name: 'mos_export_rows_total',
    help: 'Rows written by exports, by base format.',
    labelNames: ['format'] as const,
    registers: [this.registry],
  });

  readonly exportBytes = new Counter({
    name: 'mos_export_bytes_total',
    help: 'Bytes (UTF-8) written by exports, by base format.',
    labelNames: ['format'] as const,
    registers: [this.registry],
  });

  readonly rateLimitRefusals = new Counter({
    name: 'mos_rate_limit_refusals_total',
    help: 'Requests refused with 429, by kind (the problem code: rate_limited, bank_token_failures_exceeded, verification_attempts_exceeded, sign_in_rate_limited, …).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly auditChains = new Gauge({
    name: 'mos_audit_chains',
    help: 'Audit log chains (one per account environment), as of the last export of their heads (every 15 minutes).',
    registers: [this.registry],
  });

  readonly auditHeadSeqSum = new Gauge({
    name: 'mos_audit_head_seq_sum',
    help: 'The sum of every audit chain head\'s sequence number (every entry ever recorded), as of the last export of the heads.',
    registers: [this.registry],
  });

  readonly auditHeadsDigest = new Gauge({
    name: 'mos_audit_heads_digest',
    help: 'The first 48 bits, as an integer, of the SHA-256 digest over every audit chain head at the last export (its log line "audit chain heads" gives it in full).',
    registers: [this.registry],
  });

  /** The numbers of an export of the audit chains' heads (src/services/auditHeads.ts). */
  auditHeads(summary: { chains: number; entries: number; digest: string }): void {
    this.auditChains.set(summary.chains);
    this.auditHeadSeqSum.set(summary.entries);
    this.auditHeadsDigest.set(Number.parseInt(summary.digest.slice(0, 12), 16));
  }

  constructor(sources: MetricSources) {
    collectDefaultMetrics({ register: this.registry });
    const registers = [this.registry];
    if (sources.storageState) {
      const state = sources.storageState;
      new Gauge({
        name: 'mos_store_degraded',
        help: '1 while the embedded store is degraded (a disk write failed: writes refused, reads served), else 0.',
        registers,
        collect() {
          this.set(state() === 'degraded' ? 1 : 0);
        },
      });
    }
    if (sources.databaseBytes) {
      const databaseBytes = sources.databaseBytes;
      new Gauge({
        name: 'mos_store_database_bytes',
        help: 'sql.js: the database held in memory, in bytes; the service\'s memory grows with it by design.',
        registers,
        collect() {
          this.set(databaseBytes());
        },
      });
    }
    if (sources.archive) archiveGauges(sources.archive, registers);
    if (sources.replicas) replicaMetrics(sources.replicas, registers);
    if (sources.pool) {
      const pool = sources.pool;
      new Gauge({
        name: 'mos_store_pool_connections',
        help: 'PostgreSQL pool connections by state (total, idle).',
        labelNames: ['state'] as const,
        registers,
        collect() {
          const p = pool();
          this.set({ state: 'total' }, p.total);
          this.set({ state: 'idle' }, p.idle);
        },
      });
      new Gauge({
        name: 'mos_store_pool_waiting_clients',
        help: 'Callers waiting for a PostgreSQL pool connection.',
        registers,
        collect() {
          this.set(pool().waiting);
        },
      });
    }
    if (sources.outboxBacklog) {
      // One query per scrape serves both gauges (the second collect reuses the first's answer).
      // A store that cannot answer (the database unreachable) leaves them as they were: the scrape still succeeds.
      const read = sources.outboxBacklog;
      let pending: Promise<{ pending: number; oldestCreatedAt: string | null } | null> | null = null;
      const backlog = () =>
        (pending ??= read()
          .catch(() => null)
          .finally(() => setImmediate(() => (pending = null))));
      new Gauge({
        name: 'mos_outbox_pending_deliveries',
        help: 'Webhook deliveries not yet delivered nor given up (the outbox depth).',
        registers,
        async collect() {
          const read = await backlog();
          if (read) this.set(read.pending);
        },
      });
      new Gauge({
        name: 'mos_outbox_oldest_pending_age_seconds',
        help: 'Age of the oldest pending webhook delivery (0 when there is none).',
        registers,
        async collect() {
          const read = await backlog();
          if (read) this.set(read.oldestCreatedAt === null ? 0 : Math.max(0, (sources.now() - Date.parse(read.oldestCreatedAt)) / 1000));
        },
      });
    }
  }
}

/** The continuous archive's gauges (docs/operators/backups.md#watching-the-archive): read at scrape time. */
function archiveGauges(archive: NonNullable<MetricSources['archive']>, registers: Registry[]): void {
  const gauge = (name: string, help: string, read: (a: NonNullable<ReturnType<typeof archive>>) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const status = archive();
        const value = status ? read(status) : null;
        if (value !== null) this.set(value);
      },
    });
  gauge('mos_archive_last_success_timestamp_seconds', 'sql.js with ARCHIVE_DIR: when a file was last written to the archive (Unix seconds); 0 until the first, so an alert on its age fires.', (a) =>
    a.lastSuccessMs === null ? null : a.lastSuccessMs / 1000,
  );
  gauge('mos_archive_lag_bytes', 'sql.js with ARCHIVE_DIR: journal bytes acknowledged but not yet in the archive.', (a) => a.lagBytes);
  gauge('mos_archive_lag_seconds', 'sql.js with ARCHIVE_DIR: how long the oldest acknowledged write not yet in the archive has waited.', (a) => a.lagSeconds);
  gauge('mos_archive_failing', 'sql.js with ARCHIVE_DIR: 1 while the archive cannot be written (or was refused as another store\'s), else 0.', (a) => (a.state === 'ok' ? 0 : 1));
}

/** Replica reads by target, lag and use (docs/operators/postgresql.md#read-replicas): read at scrape time. */
function replicaMetrics(replicas: () => ReplicaSources, registers: Registry[]): void {
  new Counter({
    name: 'mos_store_replica_reads_total',
    help: 'Reads of x-read-replica operations by where they ran: a replica by name, `primary_read_your_writes` (the caller\'s write not yet replayed), `primary_fallback` (no replica usable, or it failed under the read).',
    labelNames: ['target'] as const,
    registers,
    collect() {
      const r = replicas();
      this.reset();
      for (const replica of r.replicas) this.inc({ target: replica.name }, replica.reads);
      this.inc({ target: 'primary_read_your_writes' }, r.readYourWrites);
      this.inc({ target: 'primary_fallback' }, r.fallbacks);
    },
  });
  new Gauge({
    name: 'mos_store_replica_lag_seconds',
    help: 'How far each replica\'s replay is behind the primary, in seconds (absent while unknown: unreachable, or never caught up).',
    labelNames: ['replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const replica of replicas().replicas) if (replica.lagSeconds !== null) this.set({ replica: replica.name }, replica.lagSeconds);
    },
  });
  new Gauge({
    name: 'mos_store_replica_usable',
    help: '1 while a replica serves reads; 0 while it is dropped (lagging beyond DATABASE_REPLICA_MAX_LAG_MS, failed, or promoted).',
    labelNames: ['replica'] as const,
    registers,
    collect() {
      for (const replica of replicas().replicas) this.set({ replica: replica.name }, replica.usable ? 1 : 0);
    },
  });
}
