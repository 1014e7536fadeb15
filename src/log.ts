/**
 * Structured JSON logs (pino). Credentials never reach a log line: the redaction list covers
 * every place a secret could travel through a logged object.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'apiKey',
  'token',
  'secret',
  'accountNumber',
  '*.apiKey',
  '*.token',
  '*.secret',
  '*.accountNumber',
  '*.applicant.accountNumber',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'mortgage-origination' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

const LEVEL_METHODS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);
const noop = () => {};

/**
 * `base.child(bindings)`, made on first use of anything but a level the logger leaves out: a
 * request whose handler logs only below LOG_LEVEL (a debug line at info, an info line at warn)
 * makes no child. pino's child() (bindings serialised through the redaction) was a measurable
 * share of a quote's CPU (issue 17).
 */
export function lazyChild(base: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const made = () => (child ??= base.child(bindings));
  return new Proxy(base, {
    get(_base, prop) {
      if (child === undefined && typeof prop === 'string' && LEVEL_METHODS.has(prop) && !base.isLevelEnabled(prop)) return noop;
      const target = made();
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(_base, prop, value) {
      return Reflect.set(made(), prop, value);
    },
  });
}
