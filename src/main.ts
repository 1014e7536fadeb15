/**
 * Process entry: read the configuration, open the store, build the app, listen, and shut down
 * cleanly on SIGTERM/SIGINT (stop accepting, finish in-flight requests, stop background work,
 * checkpoint and close the store).
 */
import { once } from 'node:events';
import { chmod, mkdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.ts';
import { startBackgroundWork } from './background.ts';
import { startAdminSocket } from './cli/adminSocket.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createContext } from './createContext.ts';
import { createLogger } from './log.ts';
import { startMetricsServer } from './observability/metricsServer.ts';
import { openStore } from './store/open.ts';
import { redactDatabaseUrl } from './store/postgres/pgStore.ts';

/** In-flight requests get this long to finish after a shutdown signal before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  // Before anything is traced; loaded only when tracing is on (see src/observability/tracingSdk.ts).
  const sdk = config.telemetry.tracing ? await import('./observability/tracingSdk.ts') : null;
  const tracing = sdk ? sdk.startTracing(config.telemetry.otel) : null;
  // Only the service's user may enter DATA_DIR (database, documents, secrets, the admin socket),
  // whatever the umask it was started under.
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await chmod(config.dataDir, 0o700);
  const store = await openStore({
    dataDir: config.dataDir,
    database: config.database,
    secrets: config.secrets,
    storageProbeIntervalMs: config.storageProbeIntervalMs,
    archive: config.archive,
    onLog: (level, msg, fields) => log[level]({ ...fields }, msg),
  });
  const ctx = createContext({ config, store, clock: systemClock, log, tracer: tracing?.tracer ?? null });

  const { app, requestLogs } = await buildApp(ctx);
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 5_000;
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  // On PostgreSQL the admin command line writes to the database itself; the socket is for sql.js's one process.
  const adminSocket = store.sharedByInstances ? { close: async () => {} } : await startAdminSocket(ctx);
  const background = startBackgroundWork(ctx);
  // Scraped without an API key: on its own port, bound to METRICS_HOST (127.0.0.1 unless told otherwise).
  const metricsServer = ctx.metrics && config.telemetry.metricsPort !== null ? await startMetricsServer(ctx.metrics, config.telemetry.metricsHost, config.telemetry.metricsPort) : null;
  if (metricsServer) log.info({ port: metricsServer.port, host: config.telemetry.metricsHost }, 'metrics listening at /metrics');
  if (sdk) log.info({ to: new URL(sdk.tracesEndpoint(config.telemetry.otel)).origin }, 'exporting traces');
  const database = config.database.url === null ? { engine: 'sqljs' } : { engine: 'postgres', databaseUrl: redactDatabaseUrl(config.database.url) };
  log.info({ port, host: config.host, dataDir: config.dataDir, ...database, docs: `http://${config.host}:${port}/docs` }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const forced = setTimeout(() => {
      log.error('in-flight work did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    forced.unref();
    server.closeIdleConnections();
    // A keep-alive connection whose request finishes after this goes idle, and would hold close()
    // for keepAliveTimeout: close those as they go idle.
    const reaper = setInterval(() => server.closeIdleConnections(), 50);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearInterval(reaper);
    await adminSocket.close();
    // The request log entries of the last requests still in memory are written before the store closes.
    await requestLogs.stop();
    await Promise.all(background.map((task) => task.stop()));
    await metricsServer?.close();
    await store.close();
    await tracing?.shutdown().catch((err: Error) => log.warn({ err: err.message }, 'the last spans could not be exported'));
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
