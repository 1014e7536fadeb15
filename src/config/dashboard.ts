/**
 * The settings of the dashboard's sessions and sign-in limits. Read by loadConfig (src/config.ts)
 * from the same environment, kept apart by concern; docs/operators/configuration.md renders these
 * comments too (scripts/config-docs.ts).
 */
import { integer, type Env } from '../configValues.ts';

/** Settings of the dashboard's sign-in; see docs/operators/security.md. */
export interface DashboardConfig {
  /** DASHBOARD_SESSION_IDLE_MINUTES: a session with no request for this long ends (default 30). */
  sessionIdleMinutes: number;
  /** DASHBOARD_SESSION_ABSOLUTE_HOURS: a session ends this long after sign-in, however active (default 8). */
  sessionAbsoluteHours: number;
  /**
   * DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE: failed sign-ins one email may have
   * a minute from one client address (an IPv6 client by its /64); beyond it sign-ins with that email
   * from that address get 429 until the minute ends, whatever the password (default 5; 0: no limit).
   * A stranger guessing from one address locks out only that address, never the owner elsewhere.
   */
  signInFailuresPerEmailAndAddressPerMinute: number;
  /**
   * DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE: the ceiling for one email from every address
   * together (default 100; 0: no limit). It is set well above the per-address limit, so that no one
   * address can hold an email at it: holding it takes failures from at least
   * ceiling / per-address-limit addresses at once (5 with the defaults).
   */
  signInFailuresPerEmailPerMinute: number;
  /** DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE: the same per client address (an IPv6 client by its /64; default 20; 0: no limit). */
  signInFailuresPerAddressPerMinute: number;
  /**
   * DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: sign-up attempts a minute per client address (an IPv6
   * client by its /64; default 5; 0: no limit). Each runs a memory-hard password hash and may open
   * an account, so it is counted whether it succeeds or not.
   */
  signUpsPerAddressPerMinute: number;
}

export function dashboardSettings(env: Env, problems: string[]): DashboardConfig {
  return {
    sessionIdleMinutes: integer(env, 'DASHBOARD_SESSION_IDLE_MINUTES', 30, 1, 24 * 60, problems),
    sessionAbsoluteHours: integer(env, 'DASHBOARD_SESSION_ABSOLUTE_HOURS', 8, 1, 30 * 24, problems),
    signInFailuresPerEmailAndAddressPerMinute: integer(env, 'DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_AND_ADDRESS_PER_MINUTE', 5, 0, 1_000_000, problems),
    signInFailuresPerEmailPerMinute: integer(env, 'DASHBOARD_SIGN_IN_FAILURES_PER_EMAIL_PER_MINUTE', 100, 0, 1_000_000, problems),
    signInFailuresPerAddressPerMinute: integer(env, 'DASHBOARD_SIGN_IN_FAILURES_PER_ADDRESS_PER_MINUTE', 20, 0, 1_000_000, problems),
    signUpsPerAddressPerMinute: integer(env, 'DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE', 5, 0, 1_000_000, problems),
  };
}
