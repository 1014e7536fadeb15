/**
 * Every setting of the service, read once from the environment and validated at start.
 * Nothing else in the code reads process.env.
 */
import path from 'node:path';

export interface Config {
  /** TCP port to listen on; 0 picks a free one (tests). */
  port: number;
  host: string;
  /** Where the database snapshot, its journal and uploaded documents live. */
  dataDir: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Requests a minute per API key; 0 turns rate limiting off. */
  rateLimitPerMinute: number;
  /** Largest JSON request body accepted, in bytes. */
  jsonBodyLimitBytes: number;
  /** The URL partners reach this service at, used in links the service hands out (document URLs). */
  publicBaseUrl: string;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Reads an integer setting within bounds, collecting a readable problem instead of throwing. */
function integer(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return fallback;
  }
  const value = Number(raw.trim());
  if (value < min || value > max) problems.push(`${name} must be from ${min} to ${max}, got ${value}`);
  return value;
}

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const port = integer(env, 'PORT', 3000, 0, 65535, problems);
  const host = env.HOST?.trim() || '127.0.0.1';
  const dataDir = path.resolve(cwd, env.DATA_DIR?.trim() || './data');

  const logLevelRaw = (env.LOG_LEVEL?.trim() || 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const rateLimitPerMinute = integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 0, 1_000_000, problems);
  const jsonBodyLimitBytes = integer(env, 'JSON_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024, problems);

  const displayHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  let publicBaseUrl = env.PUBLIC_BASE_URL?.trim() || `http://${displayHost}:${port}`;
  try {
    const url = new URL(publicBaseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    publicBaseUrl = url.origin + url.pathname.replace(/\/+$/, '');
  } catch {
    problems.push(`PUBLIC_BASE_URL must be an absolute http(s) URL, got "${env.PUBLIC_BASE_URL}"`);
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port,
    host,
    dataDir,
    logLevel: logLevelRaw as Config['logLevel'],
    rateLimitPerMinute,
    jsonBodyLimitBytes,
    publicBaseUrl,
  };
}
