/**
 * When a dashboard session ends, after OWASP's Session Management cheat sheet: an idle timeout
 * (no request for a while) and an absolute timeout (however active), whichever comes first.
 */
export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
}

/** A session's last request is recorded at most this often, so a busy page costs no write per request. */
const TOUCH_INTERVAL_MS = 60_000;

export interface SessionTimes {
  /** ISO 8601. */
  lastSeenAt: string;
  expiresAt: string;
}

export function sessionIsLive(session: SessionTimes, now: number, policy: SessionPolicy): boolean {
  return now < Date.parse(session.expiresAt) && now - Date.parse(session.lastSeenAt) < policy.idleMs;
}

export function needsTouch(session: SessionTimes, now: number): boolean {
  return now - Date.parse(session.lastSeenAt) >= TOUCH_INTERVAL_MS;
}

/** When a session made at `now` ends at the latest. */
export function absoluteExpiry(now: number, policy: SessionPolicy): string {
  return new Date(now + policy.absoluteMs).toISOString();
}
