/**
 * Runs the CRM sync: catches up from the events feed, then receives webhook deliveries.
 * `node examples/crm-sync/main.ts` with the settings below in the environment (README.md beside this file).
 */
import { createCrmSync } from './sync.ts';

function setting(name: string, fallback?: string): string {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') {
    console.error(`set ${name} (see examples/crm-sync/README.md)`);
    process.exit(2);
  }
  return value;
}

const sync = createCrmSync({
  baseUrl: setting('MOS_BASE_URL', 'http://127.0.0.1:3000'),
  apiKey: setting('MOS_API_KEY'),
  webhookSecret: setting('MOS_WEBHOOK_SECRET'),
  crmUrl: setting('CRM_URL'),
  statePath: setting('STATE_PATH', 'crm-sync-state.json'),
  // The kinds the webhook endpoint chose, comma-separated: catching up reads the same from the feed.
  events: setting('MOS_EVENTS', 'application.approved').split(',').map((kind) => kind.trim()).filter(Boolean),
});
const caughtUp = await sync.catchUp();
console.log(`caught up on ${caughtUp} events`);
const port = Number(setting('PORT', '9200'));
sync.server.listen(port, '127.0.0.1', () => console.log(`CRM sync listening on http://127.0.0.1:${port}/`));
