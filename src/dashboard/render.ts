/**
 * Pages are Eta templates (src/dashboard/views) rendered on the server. Eta escapes every `<%= %>`
 * value (autoEscape, on by default and set here explicitly); the templates use raw output (`<%~ %>`)
 * only for other templates' output (the layout's body, includes), never for a value.
 */
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { Context } from 'koa';
import { needsEnrolment } from '../services/mfa.ts';
import type { DashboardState } from './state.ts';

const VIEWS = fileURLToPath(new URL('./views', import.meta.url));

const eta = new Eta({ views: VIEWS, autoEscape: true, cache: true, autoTrim: [false, 'nl'] });

/** Formatting the templates share: times in UTC, money with separators, percentages. */
const fmt = {
  time: (iso: string | null | undefined): string => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '—'),
  money: (value: number | null | undefined, currency = ''): string =>
    value === null || value === undefined ? '—' : `${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}${currency ? ` ${currency}` : ''}`,
  percent: (value: number | null | undefined): string => (value === null || value === undefined ? '—' : `${value} %`),
  /** A decision reason's figure in its unit: `29.201 %`, `720 points`, `350,000.00 USD`. */
  measure: (value: number | null | undefined, unit: string | null | undefined): string => {
    if (value === null || value === undefined) return '—';
    if (unit === 'percent') return fmt.percent(value);
    if (unit && /^[A-Z]{3}$/.test(unit)) return fmt.money(value, unit);
    return unit ? `${value} ${unit}` : String(value);
  },
  /** An id for the element of a field named by a pointer (`/baseRates/0/rate` → `f-baseRates-0-rate`). */
  id: (name: string): string => `f${name.replace(/[^A-Za-z0-9_-]/g, '-')}`,
};

export type NavItem = 'overview' | 'applications' | 'quotes' | 'exports' | 'api-keys' | 'webhooks' | 'team' | 'settings' | 'audit' | 'security' | 'request-logs' | 'none';

/** Renders `view` as the response, with what every page's layout needs. */
export function render(koa: Context, view: string, data: Record<string, unknown> & { title: string; nav?: NavItem }, status = 200): void {
  const state = koa.state.dashboard as DashboardState;
  const session = state.session;
  koa.status = status;
  koa.type = 'text/html; charset=utf-8';
  koa.set('Cache-Control', 'no-store');
  koa.body = eta.render(`./${view}`, {
    nav: 'none',
    fmt,
    ...data,
    user: session?.user ?? null,
    isAdmin: session?.user.role === 'admin',
    environment: session?.environment ?? null,
    // A session owing its second factor (the code, or an enrolment its account requires) is shown no sections.
    restricted: session !== null && (session.stage === 'second_factor' || needsEnrolment(session)),
    csrfToken: session?.csrfToken ?? state.anonymousCsrf ?? '',
    // Where the environment switch comes back to: this section of the dashboard.
    currentPath: koa.path,
  });
}
