/**
 * The application state machine, as a table: each row is one allowed move. Anything not in the
 * table is refused (409 with the current status). The same table is printed in the spec's
 * Applications tag description and in docs/partners/applications.md.
 *
 * | from      | action   | to        | who                      |
 * |-----------|----------|-----------|--------------------------|
 * | draft     | submit   | submitted | any key                  |
 * | submitted | decide   | approved  | underwriting rules       |
 * | submitted | decide   | declined  | underwriting rules       |
 * | submitted | decide   | referred  | underwriting rules       |
 * | referred  | approve  | approved  | admin key                |
 * | referred  | decline  | declined  | admin key                |
 * | draft     | withdraw | withdrawn | any key                  |
 * | submitted | withdraw | withdrawn | any key                  |
 * | referred  | withdraw | withdrawn | any key                  |
 * | approved  | clear    | clear_to_close | its closing conditions cleared |
 */
import type { components } from '../../../generated/api.d.ts';

export type ApplicationStatus = components['schemas']['ApplicationStatus'];

/** Every status, for walking the table (test/unit/contract/specEnums.test.ts ties it to the spec's enum both ways). */
export const APPLICATION_STATUSES = ['draft', 'submitted', 'approved', 'declined', 'referred', 'withdrawn', 'clear_to_close'] as const satisfies readonly ApplicationStatus[];

export const APPLICATION_ACTIONS = ['submit', 'decide', 'approve', 'decline', 'withdraw', 'clear'] as const;
export type ApplicationAction = (typeof APPLICATION_ACTIONS)[number];

export interface Transition {
  from: ApplicationStatus;
  action: ApplicationAction;
  to: ApplicationStatus;
}

export const TRANSITIONS: readonly Transition[] = [
  { from: 'draft', action: 'submit', to: 'submitted' },
  { from: 'submitted', action: 'decide', to: 'approved' },
  { from: 'submitted', action: 'decide', to: 'declined' },
  { from: 'submitted', action: 'decide', to: 'referred' },
  { from: 'referred', action: 'approve', to: 'approved' },
  { from: 'referred', action: 'decline', to: 'declined' },
  { from: 'draft', action: 'withdraw', to: 'withdrawn' },
  { from: 'submitted', action: 'withdraw', to: 'withdrawn' },
  { from: 'referred', action: 'withdraw', to: 'withdrawn' },
  { from: 'approved', action: 'clear', to: 'clear_to_close' },
];

/** Statuses from which no move leads anywhere. */
export const FINAL_STATUSES: readonly ApplicationStatus[] = APPLICATION_STATUSES.filter(
  (status) => !TRANSITIONS.some((t) => t.from === status),
);

/** True when the table allows `action` to move an application from `from` to `to`. */
export function canTransition(from: ApplicationStatus, action: ApplicationAction, to: ApplicationStatus): boolean {
  return TRANSITIONS.some((t) => t.from === from && t.action === action && t.to === to);
}

/** The statuses `action` may lead to from `from` (empty when the action is refused there). */
export function targetsOf(from: ApplicationStatus, action: ApplicationAction): ApplicationStatus[] {
  return TRANSITIONS.filter((t) => t.from === from && t.action === action).map((t) => t.to);
}

/** Only drafts may be edited. */
export function isEditable(status: ApplicationStatus): boolean {
  return status === 'draft';
}

/** Conditions live on approved applications: added while approved (or, due before funding, once clear to close), cleared in both. */
export function hasConditions(status: ApplicationStatus): boolean {
  return status === 'approved' || status === 'clear_to_close';
}

/** Documents may be attached while the application is still alive: not withdrawn, not declined. */
export function acceptsDocuments(status: ApplicationStatus): boolean {
  return status !== 'withdrawn' && status !== 'declined';
}
