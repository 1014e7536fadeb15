/**
 * Starts the real app in-process on 127.0.0.1 with a fresh data directory, and makes accounts and
 * keys for tests. API tests talk to it over HTTP through `client` (openapi-fetch with the
 * generated types and the contract check).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { OpenAPIBackend } from 'openapi-backend';
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/api.d.ts';
import { buildApp } from '../../src/app.ts';
import { systemClock, type Clock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { ADMIN, createAccount, createApiKey, revokeApiKey } from '../../src/services/accounts.ts';
import type { AppContext } from '../../src/context.ts';
import { createContext } from '../../src/createContext.ts';
import type { Resolver } from '../../src/net/resolve.ts';
import { openSqlJsStore, type SqlJsStore, type SqlJsStoreOptions } from '../../src/store/sqljs/sqljsStore.ts';
import { openStore } from '../../src/store/open.ts';
import { startMetricsServer, type MetricsServer } from '../../src/observability/metricsServer.ts';
import type { Tracer } from '../../src/observability/tracing.ts';
import { contractFetch } from './contractFetch.ts';
import { databaseEnv, testEngine, testDatabase } from './engine.ts';

export type ApiClient = Client<paths>;

export interface TestAccount {
  accountId: string;
  /** An admin key of the account and a client that sends it. */
  apiKey: string;
  client: ApiClient;
  /** A member key of the account and a client that sends it. */
  memberKey: string;
  member: ApiClient;
  /** The account's first test-mode admin key (`mos_test_…`) and a client that sends it. */
  testKey: string;
  test: ApiClient;
}

export interface TestApp {
  baseUrl: string;
  dataDir: string;
  /** 'sqljs' or 'postgres' (TEST_ENGINE): the postgres project of vitest.config.ts runs the API suite again on PostgreSQL. */
  engine: 'sqljs' | 'postgres';
  /** The app's dependency context (its store typed as the sql.js engine, for the sql.js-only tests that look inside). */
  ctx: AppContext & { store: SqlJsStore };
  /** The openapi-backend instance that routes /v1 in this app. */
  api: OpenAPIBackend;
  /** A client with no credentials. */
  anonymous: ApiClient;
  clientFor(bearer: string): ApiClient;
  newAccount(name?: string): Promise<TestAccount>;
  /** Creates and revokes a key: a credential that once was valid. */
  revokedKey(accountId: string): Promise<string>;
  /** Raw fetch against the app (contract-checked), for requests the typed client cannot make. */
  fetch(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** With METRICS_PORT in `env` (0: a free port): the metrics listener's /metrics URL, else null. */
  metricsUrl: string | null;
  /** Writes the request log entries waiting in memory (they are otherwise written about a second after each answer). */
  flushRequestLogs(): Promise<void>;
  /** The same app (same limits, same state) served on ::1 too, for tests that need a second client address. */
  baseUrlOnIpv6Loopback(): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** DNS for the outbound address guard (default the system's). */
  resolve?: Resolver;
  /** Where the app's pino log lines go (default stdout), e.g. to scan them; set LOG_LEVEL in `env` too. */
  logDestination?: { write(line: string): void };
  /** Use this data directory (it must exist) instead of a fresh temporary one. */
  dataDir?: string;
  /**
   * Use this PostgreSQL database (not dropped by close()) instead of a fresh one: two apps given the
   * same URL are two instances on one database.
   */
  databaseUrl?: string;
  /** Store options beyond those the config gives (a fault-injecting file layer, for example). */
  store?: Partial<SqlJsStoreOptions>;
  /** Where the app's spans go (a test's in-memory exporter); default none (tracing off). */
  tracer?: Tracer;
}

export function apiClient(baseUrl: string, bearer?: string): ApiClient {
  return createClient<paths>({
    baseUrl,
    fetch: contractFetch,
    headers: bearer ? { Authorization: `Bearer ${bearer}` } : {},
  });
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'mos-test-')));
  const engine = options.databaseUrl ? 'postgres' : testEngine();
  // On PostgreSQL: a database of this app's own (random name), dropped by close(), unless one is given.
  const database = options.databaseUrl ? { url: options.databaseUrl, drop: async () => {} } : engine === 'postgres' ? await testDatabase() : null;
  const config: Config = loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    ...(database ? { ...databaseEnv(database.url), DATABASE_POOL_MAX: '8' } : {}),
    ...options.env,
  });
  const store = (
    database
      ? await openStore({ dataDir, database: config.database, secrets: config.secrets })
      : await openSqlJsStore({ dataDir, secrets: config.secrets, storageProbeIntervalMs: config.storageProbeIntervalMs, ...options.store })
  ) as SqlJsStore;
  const clock = options.clock ?? systemClock;
  const log = createLogger(config.logLevel, options.logDestination);
  const ctx = createContext({ config, store, clock, log, tracer: options.tracer ?? null, ...(options.resolve ? { resolve: options.resolve } : {}) }) as AppContext & {
    store: SqlJsStore;
  };
  const { app, api, requestLogs } = await buildApp(ctx);
  const callback = app.callback();
  const server = http.createServer(callback);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  config.publicBaseUrl = baseUrl;
  let ipv6Server: http.Server | undefined;
  // As main.ts starts it: its own port, on METRICS_HOST.
  const metricsServer: MetricsServer | null =
    ctx.metrics && config.telemetry.metricsPort !== null ? await startMetricsServer(ctx.metrics, config.telemetry.metricsHost, config.telemetry.metricsPort) : null;

  const clientFor = (bearer: string) => apiClient(baseUrl, bearer);
  return {
    baseUrl,
    dataDir,
    engine,
    ctx,
    api,
    anonymous: apiClient(baseUrl),
    clientFor,
    async newAccount(name = 'Harbor Lending') {
      const { account, firstKey, firstTestKey } = await createAccount(ctx, { name, email: 'ops@harborlending.test' });
      const member = await createApiKey(ctx, account.accountId, { role: 'member', name: 'Member key' }, ADMIN);
      return {
        accountId: account.accountId,
        apiKey: firstKey.apiKey,
        client: clientFor(firstKey.apiKey),
        memberKey: member.apiKey,
        member: clientFor(member.apiKey),
        testKey: firstTestKey.apiKey,
        test: clientFor(firstTestKey.apiKey),
      };
    },
    async revokedKey(accountId) {
      const key = await createApiKey(ctx, accountId, { role: 'admin', name: 'Soon revoked' }, ADMIN);
      await revokeApiKey(ctx, accountId, key.record.keyId, ADMIN);
      return key.apiKey;
    },
    fetch: (pathAndQuery, init) => contractFetch(baseUrl + pathAndQuery, init),
    metricsUrl: metricsServer ? `http://${config.telemetry.metricsHost}:${metricsServer.port}/metrics` : null,
    flushRequestLogs: () => requestLogs.flush(),
    async baseUrlOnIpv6Loopback() {
      if (!ipv6Server) {
        ipv6Server = http.createServer(callback);
        await new Promise<void>((resolve) => ipv6Server!.listen(0, '::1', resolve));
      }
      return `http://[::1]:${(ipv6Server.address() as AddressInfo).port}`;
    },
    async close() {
      if (ipv6Server) {
        ipv6Server.closeAllConnections();
        await new Promise<void>((resolve) => ipv6Server!.close(() => resolve()));
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await metricsServer?.close();
      await requestLogs.stop();
      await store.close();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
