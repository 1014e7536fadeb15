/**
 * 2026-12-07: eleven event kinds were added (the lending workflow's application.* events and the
 * rate_lock.* events). The first version has the interface document's two, `application.approved`
 * and `document.uploaded`, whose payloads are the same bytes in every version. On it, events of
 * the other kinds are neither delivered nor listed, and an endpoint lists only the two among the
 * events it chose.
 */
import { addedEventKinds } from './addedEventKinds.ts';

export const eventKinds = addedEventKinds({
  version: '2026-12-07',
  name: 'event-kinds-lending-and-rate-locks',
  description:
    'Eleven event kinds were added: application.submitted, application.referred, application.declined, application.withdrawn, ' +
    'application.conditions_updated, application.cleared_to_close and rate_lock.created/extended/expiring/expired/cancelled. ' +
    'Earlier versions have only application.approved and document.uploaded: other events are not delivered to an endpoint on them, ' +
    'not listed in the events feed, and not shown among an endpoint\'s events.',
  kinds: [
    'application.submitted',
    'application.referred',
    'application.declined',
    'application.withdrawn',
    'application.conditions_updated',
    'application.cleared_to_close',
    'rate_lock.created',
    'rate_lock.extended',
    'rate_lock.expiring',
    'rate_lock.expired',
    'rate_lock.cancelled',
  ],
});
