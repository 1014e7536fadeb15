import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APPLICATION_ACTIONS,
  APPLICATION_STATUSES,
  FINAL_STATUSES,
  TRANSITIONS,
  acceptsDocuments,
  canTransition,
  isEditable,
  targetsOf,
  type ApplicationAction,
  type ApplicationStatus,
} from '../../../../src/domain/applications/stateMachine.ts';

/** The state machine, written out independently of the module's table. */
const ALLOWED: Array<[ApplicationStatus, ApplicationAction, ApplicationStatus]> = [
  ['draft', 'submit', 'submitted'],
  ['submitted', 'decide', 'approved'],
  ['submitted', 'decide', 'declined'],
  ['submitted', 'decide', 'referred'],
  ['referred', 'approve', 'approved'],
  ['referred', 'decline', 'declined'],
  ['draft', 'withdraw', 'withdrawn'],
  ['submitted', 'withdraw', 'withdrawn'],
  ['referred', 'withdraw', 'withdrawn'],
  ['approved', 'clear', 'clear_to_close'],
];
const key = (from: string, action: string, to: string) => `${from} -${action}-> ${to}`;
const allowedKeys = new Set(ALLOWED.map(([f, a, t]) => key(f, a, t)));

const everyMove = APPLICATION_STATUSES.flatMap((from) =>
  APPLICATION_ACTIONS.flatMap((action) => APPLICATION_STATUSES.map((to) => [from, action, to] as const)),
);

describe('the application state machine', () => {
  it.each(ALLOWED)('allows %s -%s-> %s', (from, action, to) => {
    expect(canTransition(from, action, to)).toBe(true);
  });

  it.each(everyMove.filter(([f, a, t]) => !allowedKeys.has(key(f, a, t))))('refuses %s -%s-> %s', (from, action, to) => {
    expect(canTransition(from, action, to)).toBe(false);
  });

  it('the table has exactly the issue’s ten moves (the nine of the first issue, and clear to close)', () => {
    expect(new Set(TRANSITIONS.map((t) => key(t.from, t.action, t.to)))).toEqual(allowedKeys);
  });

  it('declined, withdrawn and clear_to_close are final: no move leaves them', () => {
    expect([...FINAL_STATUSES].sort()).toEqual(['clear_to_close', 'declined', 'withdrawn']);
    fc.assert(
      fc.property(fc.constantFrom(...FINAL_STATUSES), fc.constantFrom(...APPLICATION_ACTIONS), (status, action) => {
        expect(targetsOf(status, action)).toEqual([]);
      }),
    );
  });

  it('every status is reachable from draft', () => {
    const reached = new Set<ApplicationStatus>(['draft']);
    for (let grew = true; grew; ) {
      grew = false;
      for (const t of TRANSITIONS) {
        if (reached.has(t.from) && !reached.has(t.to)) {
          reached.add(t.to);
          grew = true;
        }
      }
    }
    expect([...reached].sort()).toEqual([...APPLICATION_STATUSES].sort());
  });

  it('the automated decision leads from submitted to exactly approved, declined or referred', () => {
    expect(targetsOf('submitted', 'decide').sort()).toEqual(['approved', 'declined', 'referred']);
  });

  it('only a draft is editable', () => {
    for (const status of APPLICATION_STATUSES) expect(isEditable(status)).toBe(status === 'draft');
  });

  it('withdrawn and declined applications take no documents; every other status does', () => {
    for (const status of APPLICATION_STATUSES) expect(acceptsDocuments(status)).toBe(status !== 'withdrawn' && status !== 'declined');
  });
});
