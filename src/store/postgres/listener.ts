/**
 * LISTEN/NOTIFY for the PostgreSQL engine: one dedicated connection (outside the pool, which would
 * hand it to a transaction) runs LISTEN for every channel asked for, and reconnects when it drops.
 * What was notified while it was down is found by the pollers; they are woken at each reconnect.
 */
import pg from 'pg';

export class NotificationListener {
  private readonly listeners = new Map<string, Set<() => void>>();
  private listener: pg.Client | null = null;
  /** Channels whose LISTEN the current connection has confirmed (emptied when it drops). */
  private readonly confirmed = new Set<string>();
  private listenerStarting: Promise<void> | null = null;
  private listenRetry: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly config: pg.ClientConfig;
  private readonly log: (level: 'warn', msg: string, fields?: Record<string, unknown>) => void;

  constructor(config: pg.ClientConfig, log: (level: 'warn', msg: string, fields?: Record<string, unknown>) => void) {
    this.config = config;
    this.log = log;
  }

  listen(channel: string, listener: () => void): () => void {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      const client = this.listener;
      if (client) {
        void client.query(`LISTEN ${channel}`).then(
          () => {
            if (this.listener === client) this.confirmed.add(channel);
          },
          () => {},
        );
      }
    }
    set.add(listener);
    void this.start();
    return () => set.delete(listener);
  }

  /** True while the LISTEN on `channel` is in place: a notification on it now would be heard. */
  isListening(channel: string): boolean {
    return this.listener !== null && this.confirmed.has(channel);
  }

  private start(): Promise<void> {
    if (this.closed || this.listener) return Promise.resolve();
    this.listenerStarting ??= (async () => {
      const client = new pg.Client({ ...this.config, application_name: `${this.config.application_name}-listen` });
      client.on('notification', (message) => {
        for (const fn of this.listeners.get(message.channel) ?? []) fn();
      });
      const restart = (err?: Error) => {
        if (this.listener !== client) return;
        this.listener = null;
        this.confirmed.clear();
        client.end().catch(() => {});
        if (this.closed) return;
        this.log('warn', 'LISTEN connection lost; reconnecting', { err: err?.message });
        this.retryLater();
        // Whatever was notified meanwhile is found by the pollers; wake them now anyway.
        for (const set of this.listeners.values()) for (const fn of set) fn();
      };
      client.on('error', restart);
      client.on('end', () => restart());
      try {
        await client.connect();
        const channels = [...this.listeners.keys()];
        for (const channel of channels) await client.query(`LISTEN ${channel}`);
        if (this.closed) {
          await client.end();
          return;
        }
        this.listener = client;
        for (const channel of channels) this.confirmed.add(channel);
        // A channel asked for while this connection was being set up: listen on it too.
        for (const channel of this.listeners.keys()) {
          if (!this.confirmed.has(channel)) void client.query(`LISTEN ${channel}`).then(() => this.listener === client && this.confirmed.add(channel), () => {});
        }
      } catch (err) {
        await client.end().catch(() => {});
        if (!this.closed) {
          this.log('warn', 'LISTEN connection failed; retrying', { err: (err as Error).message });
          this.retryLater();
        }
      }
    })().finally(() => (this.listenerStarting = null));
    return this.listenerStarting;
  }

  private retryLater(): void {
    clearTimeout(this.listenRetry);
    this.listenRetry = setTimeout(() => void this.start(), 1_000);
    this.listenRetry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.listenRetry);
    await this.listenerStarting?.catch(() => {});
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => {});
  }
}
