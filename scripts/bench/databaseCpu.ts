/**
 * PostgreSQL's CPU time spent for one database, read from /proc between samples: each backend
 * connected to it (pg_stat_activity; a backend first seen counts from then on), plus what the
 * postmaster reaped meanwhile (parallel workers, which start and end within a query, and backends
 * that ended). For the postgres bench's CPU per request and the soak, which tells the database's
 * own growing cost from a slower machine.
 * The machine's PostgreSQL runs nothing else during a bench.
 */
import pg from 'pg';
import { processCpuMicros } from '../lib/processCpu.ts';

export class DatabaseCpu {
  private readonly client: pg.Client;
  private last = new Map<number, number>();
  private postmaster: number | null = null;
  /** The postmaster's reaped children's CPU at the last sample; null before the first read. */
  private reaped: number | null = null;

  private constructor(client: pg.Client) {
    this.client = client;
  }

  static async open(url: string): Promise<DatabaseCpu> {
    const client = new pg.Client({ connectionString: url, application_name: 'mos-bench-cpu' });
    await client.connect();
    const meter = new DatabaseCpu(client);
    await meter.sample();
    return meter;
  }

  /** Microseconds of CPU PostgreSQL spent for the database since the previous sample. */
  async sample(): Promise<number> {
    const { rows } = await this.client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    let used = 0;
    const next = new Map<number, number>();
    for (const { pid } of rows) {
      const cpu = await processCpuMicros(pid);
      if (!cpu) continue;
      const total = cpu.userUs + cpu.systemUs;
      used += total - (this.last.get(pid) ?? total);
      next.set(pid, total);
      this.postmaster ??= cpu.parentPid;
    }
    // A backend gone since the last sample was reaped with all it ever used, of which the samples
    // counted all but what it used since the last one.
    let countedOfGone = 0;
    for (const [pid, total] of this.last) if (!next.has(pid)) countedOfGone += total;
    this.last = next;
    if (this.postmaster !== null) {
      const reaped = (await processCpuMicros(this.postmaster))?.reapedChildrenUs ?? this.reaped;
      if (reaped !== null && this.reaped !== null) used += reaped - this.reaped - countedOfGone;
      this.reaped = reaped;
    }
    return used;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}
