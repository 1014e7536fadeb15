/**
 * 2026-12-07: applications gained the status `clear_to_close` (an approved application whose
 * conditions due before closing are all satisfied or waived). The first version's status list
 * ends at `approved`, and a client on it may reject an unknown value, so it sees such an
 * application as `approved`, which it still is as far as that version goes: in responses and in
 * exports, whose `status=approved` filter then finds it too.
 */
import { eachExample, eachObject, narrowEnum, rewriteObjects, type Json, type VersionChange } from '../change.ts';

const NEW_STATUS = 'clear_to_close';

/** Every application (or export record) in the body, as a copy where it changes: objects with a mortgageId and a status. */
const asApproved = (body: Json): Json =>
  rewriteObjects(body, (object) => (object.status === NEW_STATUS && typeof object.mortgageId === 'string' ? { ...object, status: 'approved' } : undefined));

const APPLICATION_OPERATIONS = [
  'listApplications',
  'createApplication',
  'getApplication',
  'updateApplication',
  'submitApplication',
  'approveApplication',
  'declineApplication',
  'withdrawApplication',
  'addCondition',
  'satisfyCondition',
  'waiveCondition',
];

export const clearToClose: VersionChange = {
  version: '2026-12-07',
  name: 'application-status-clear-to-close',
  description:
    'Applications gained the status `clear_to_close`, reached once every condition due before closing is satisfied or waived. ' +
    'On earlier versions such an application is shown as `approved`, in exports too (where `status=approved` includes it).',
  touches: { operations: APPLICATION_OPERATIONS, schemas: ['ApplicationStatus', 'Application', 'ExportRecord'], events: [] },
  downgradeResponse: (operationId, body) => (APPLICATION_OPERATIONS.includes(operationId) ? asApproved(body) : body),
  // Exports (every format) write such an application as approved, and a `status=approved` filter finds it.
  exportStatusShownAs: { [NEW_STATUS]: 'approved' },
  upgradeStatusFilter: (status) => (status === 'approved' ? ['approved', NEW_STATUS] : status === NEW_STATUS ? [] : undefined),
  downgradeSpec(spec) {
    narrowEnum(spec, 'ApplicationStatus', [NEW_STATUS]);
    eachExample(spec, (value) => eachObject(value, (object) => {
      if (object.status === NEW_STATUS && typeof object.mortgageId === 'string') object.status = 'approved';
    }));
  },
};
