/**
 * The service's settings (src/config.ts): documented defaults, and clear messages naming the
 * variable for every bad value, all reported at once.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

const CWD = '/srv/mortgage';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env, CWD);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('uses the documented defaults on an empty environment', () => {
    const config = loadConfig({}, CWD);
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: path.join(CWD, 'data'),
      logLevel: 'info',
      rateLimitPerMinute: 1200,
      jsonBodyLimitBytes: 1024 * 1024,
      publicBaseUrl: 'http://127.0.0.1:3000',
    });
  });

  it('has the documented abuse limits by default, and reads them', () => {
    const defaults = loadConfig({}, CWD);
    expect(defaults.apiKeysPerAccount).toBe(100);
    expect(defaults.webhooks.endpointsPerAccount).toBe(16);
    expect(defaults.bank).toMatchObject({ authFailuresPerClientPerMinute: 20, authFailuresPerPartnerPerMinute: 300 });
    const set = loadConfig(
      { API_KEYS_PER_ACCOUNT: '7', WEBHOOK_ENDPOINTS_PER_ACCOUNT: '3', BANK_AUTH_FAILURES_PER_CLIENT_PER_MINUTE: '0', BANK_AUTH_FAILURES_PER_PARTNER_PER_MINUTE: '9' },
      CWD,
    );
    expect(set.apiKeysPerAccount).toBe(7);
    expect(set.webhooks.endpointsPerAccount).toBe(3);
    expect(set.bank).toMatchObject({ authFailuresPerClientPerMinute: 0, authFailuresPerPartnerPerMinute: 9 });
    expect(problemsOf({ WEBHOOK_ENDPOINTS_PER_ACCOUNT: '0', API_KEYS_PER_ACCOUNT: 'many' })).toEqual([
      'API_KEYS_PER_ACCOUNT must be a whole number from 1 to 100000, got "many"',
      'WEBHOOK_ENDPOINTS_PER_ACCOUNT must be from 1 to 1000, got 0',
    ]);
  });

  it('keeps events 30 days by default; EVENT_RETENTION_DAYS sets it, from 7 days (past the retry schedule and the 5-day failing rule)', () => {
    expect(loadConfig({}, CWD).eventRetentionDays).toBe(30);
    expect(loadConfig({ EVENT_RETENTION_DAYS: '90' }, CWD).eventRetentionDays).toBe(90);
    expect(problemsOf({ EVENT_RETENTION_DAYS: '3' })).toEqual(['EVENT_RETENTION_DAYS must be from 7 to 3650, got 3']);
    expect(problemsOf({ EVENT_RETENTION_DAYS: 'forever' })).toEqual(['EVENT_RETENTION_DAYS must be a whole number from 7 to 3650, got "forever"']);
  });

  it('reads every foundation setting, trimming spaces', () => {
    const config = loadConfig(
      { PORT: ' 8080 ', HOST: '::1', DATA_DIR: 'var/db', LOG_LEVEL: 'WARN', RATE_LIMIT_PER_MINUTE: '0', JSON_BODY_LIMIT_BYTES: '2048' },
      CWD,
    );
    expect(config).toMatchObject({
      port: 8080,
      host: '::1',
      dataDir: path.join(CWD, 'var/db'),
      logLevel: 'warn',
      rateLimitPerMinute: 0,
      jsonBodyLimitBytes: 2048,
      publicBaseUrl: 'http://[::1]:8080',
    });
  });

  it('keeps an absolute DATA_DIR as it is', () => {
    expect(loadConfig({ DATA_DIR: '/var/lib/mortgage' }, CWD).dataDir).toBe('/var/lib/mortgage');
  });

  it('accepts PORT=0 (pick a free port) and 65535', () => {
    expect(loadConfig({ PORT: '0' }, CWD).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }, CWD).port).toBe(65535);
  });

  it.each([
    ['abc', 'PORT must be a whole number from 0 to 65535, got "abc"'],
    ['-1', 'PORT must be a whole number from 0 to 65535, got "-1"'],
    ['80.5', 'PORT must be a whole number from 0 to 65535, got "80.5"'],
    ['3000abc', 'PORT must be a whole number from 0 to 65535, got "3000abc"'],
    ['65536', 'PORT must be from 0 to 65535, got 65536'],
  ])('refuses PORT=%s, naming PORT', (value, message) => {
    expect(problemsOf({ PORT: value })).toEqual([message]);
  });

  it('refuses a HOST that cannot be part of a URL, naming HOST', () => {
    expect(problemsOf({ HOST: 'my host' })).toEqual(['HOST must be a host name or IP address, got "my host"']);
  });

  it('refuses an unknown LOG_LEVEL and lists the levels', () => {
    expect(problemsOf({ LOG_LEVEL: 'verbose' })).toEqual(['LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"']);
  });

  it('refuses a negative or fractional RATE_LIMIT_PER_MINUTE', () => {
    expect(problemsOf({ RATE_LIMIT_PER_MINUTE: '-5' })[0]).toMatch(/^RATE_LIMIT_PER_MINUTE must be a whole number/);
    expect(problemsOf({ RATE_LIMIT_PER_MINUTE: '1.5' })[0]).toMatch(/^RATE_LIMIT_PER_MINUTE must be a whole number/);
  });

  it('refuses a JSON body limit under 1 KiB', () => {
    expect(problemsOf({ JSON_BODY_LIMIT_BYTES: '100' })).toEqual(['JSON_BODY_LIMIT_BYTES must be from 1024 to 67108864, got 100']);
  });

  it('derives PUBLIC_BASE_URL from host and port, shows a wildcard host as localhost, and trims a trailing slash', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '4000' }, CWD).publicBaseUrl).toBe('http://localhost:4000');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.lender.example/mortgage/' }, CWD).publicBaseUrl).toBe('https://api.lender.example/mortgage');
  });

  it('refuses a PUBLIC_BASE_URL that is not an absolute http(s) URL', () => {
    expect(problemsOf({ PUBLIC_BASE_URL: 'ftp://files.example' })).toEqual(['PUBLIC_BASE_URL must be an absolute http(s) URL, got "ftp://files.example"']);
    expect(problemsOf({ PUBLIC_BASE_URL: 'api.lender.example' })).toHaveLength(1);
  });

  it('selects PostgreSQL with DATABASE_URL (sql.js in DATA_DIR without it), sizes its pool with DATABASE_POOL_MAX and an export\'s workers with DATABASE_EXPORT_WORKERS', () => {
    expect(loadConfig({}, CWD).database).toEqual({ url: null, poolMax: 10, exportWorkers: 1, pooler: null, sessionUrl: null, replicaUrls: [], readYourWritesMs: 2000, replicaMaxLagMs: 5000 });
    expect(loadConfig({ DATABASE_URL: ' postgres://127.0.0.1/mos ', DATABASE_POOL_MAX: '25', DATABASE_EXPORT_WORKERS: '0' }, CWD).database).toEqual({
      url: 'postgres://127.0.0.1/mos',
      poolMax: 25,
      exportWorkers: 0,
      pooler: null,
      sessionUrl: null,
      replicaUrls: [],
      readYourWritesMs: 2000,
      replicaMaxLagMs: 5000,
    });
    expect(problemsOf({ DATABASE_EXPORT_WORKERS: '9' })).toEqual(['DATABASE_EXPORT_WORKERS must be from 0 to 8, got 9']);
    expect(loadConfig({ DATABASE_URL: 'postgresql://mos@db.internal:5433/mos?sslmode=require' }, CWD).database.url).toBe('postgresql://mos@db.internal:5433/mos?sslmode=require');
    expect(problemsOf({ DATABASE_POOL_MAX: '0' })).toEqual(['DATABASE_POOL_MAX must be from 1 to 1000, got 0']);
    expect(problemsOf({ DATABASE_POOL_MAX: 'lots' })).toEqual(['DATABASE_POOL_MAX must be a whole number from 1 to 1000, got "lots"']);
  });

  it('refuses a DATABASE_URL that is not a PostgreSQL URL naming a database, without echoing it (it may hold a password)', () => {
    const expected = ['DATABASE_URL must be a PostgreSQL URL naming a database, like postgres://user@127.0.0.1:5432/mos'];
    for (const url of ['mysql://root:s3cret@127.0.0.1/mos', 'postgres://root:s3cret@127.0.0.1', 'postgres://root:s3cret@127.0.0.1/', 'not a url s3cret']) {
      expect(problemsOf({ DATABASE_URL: url }), url).toEqual(expected);
    }
  });

  it('takes DATABASE_POOLER=transaction with DATABASE_SESSION_URL, and refuses the pooler without a session URL, naming what it is for', () => {
    const pooled = { DATABASE_URL: 'postgres://127.0.0.1:6432/mos', DATABASE_POOLER: 'transaction', DATABASE_SESSION_URL: 'postgres://127.0.0.1:5432/mos' };
    expect(loadConfig(pooled, CWD).database).toMatchObject({ url: pooled.DATABASE_URL, pooler: 'transaction', sessionUrl: pooled.DATABASE_SESSION_URL });
    expect(problemsOf({ DATABASE_URL: pooled.DATABASE_URL, DATABASE_POOLER: 'transaction' })).toEqual([
      'DATABASE_POOLER=transaction needs DATABASE_SESSION_URL: a direct URL of the same database (not through the pooler) for migrations, LISTEN, COPY exports and cursors',
    ]);
    expect(problemsOf({ ...pooled, DATABASE_POOLER: 'session' })).toEqual(['DATABASE_POOLER must be transaction or off, got "session"']);
    expect(problemsOf({ ...pooled, DATABASE_SESSION_URL: 'mysql://root:s3cret@db/mos' })).toEqual([
      'DATABASE_SESSION_URL must be a PostgreSQL URL naming a database, like postgres://user@127.0.0.1:5432/mos',
    ]);
  });

  it('takes comma-separated DATABASE_REPLICA_URLS with their read-your-writes and lag bounds, refusing a bad URL without echoing it', () => {
    const env = { DATABASE_URL: 'postgres://db/mos', DATABASE_REPLICA_URLS: ' postgres://r1/mos, postgres://r2:5433/mos ', DATABASE_READ_YOUR_WRITES_MS: '500', DATABASE_REPLICA_MAX_LAG_MS: '1000' };
    expect(loadConfig(env, CWD).database).toMatchObject({ replicaUrls: ['postgres://r1/mos', 'postgres://r2:5433/mos'], readYourWritesMs: 500, replicaMaxLagMs: 1000 });
    expect(problemsOf({ ...env, DATABASE_REPLICA_URLS: 'postgres://r1/mos,http://user:s3cret@r2/' })).toEqual([
      'each of DATABASE_REPLICA_URLS must be a PostgreSQL URL naming a database, like postgres://user@127.0.0.1:5432/mos',
    ]);
    expect(problemsOf({ DATABASE_REPLICA_URLS: 'postgres://r1/mos' })).toEqual(['DATABASE_REPLICA_URLS needs DATABASE_URL: replicas are of a PostgreSQL primary']);
  });

  it('reports every problem at once, in a message that lists each', () => {
    let error: ConfigError | undefined;
    try {
      loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud', RATE_LIMIT_PER_MINUTE: 'many' }, CWD);
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(3);
    expect(error!.message).toBe(`Invalid configuration:\n  - ${error!.problems.join('\n  - ')}`);
    expect(error!.message).toContain('PORT');
    expect(error!.message).toContain('LOG_LEVEL');
    expect(error!.message).toContain('RATE_LIMIT_PER_MINUTE');
  });
});
