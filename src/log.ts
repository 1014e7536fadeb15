/**
 * Structured JSON logs (pino). Credentials never reach a log line: the redaction list covers
 * every place a secret could travel through a logged object.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
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
