/**
 * 2026-12-08: the adverse action notice's two event kinds. On earlier versions they are neither
 * delivered nor listed, and an endpoint lists only the other kinds among the events it chose.
 */
import { addedEventKinds } from './addedEventKinds.ts';

export const adverseActionEvents = addedEventKinds({
  version: '2026-12-08',
  name: 'event-kinds-adverse-action-notices',
  description:
    'Two event kinds were added: application.adverse_action_due (a declined application\'s notice of action taken is made, with when it is due) ' +
    'and application.adverse_action_reminder (25 days passed and its delivery is not recorded). Earlier versions neither deliver nor list them.',
  kinds: ['application.adverse_action_due', 'application.adverse_action_reminder'],
});
