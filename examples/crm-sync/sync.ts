/**
 * CRM sync, as a partner app built only on the SDK: keeps a CRM's contacts and deals in step with
 * the account's applications. Webhook deliveries (verified with the endpoint's secret) keep it
 * current; after downtime, `catchUp()` reads the events feed from the last event it handled, so
 * nothing that happened while it was down is missed.
 *
 * Each event is handled by reading the application as it is now and upserting its contact (keyed
 * by email) and its deal (keyed by mortgageId) in the CRM: handling an event twice, or out of
 * order, leaves the CRM the same. The CRM here is any HTTP API with `PUT /contacts/{email}` and
 * `PUT /deals/{mortgageId}` taking JSON; adapt `upsert` to yours.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createMortgageClient, verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../../sdk/src/index.ts';

export interface CrmSyncOptions {
  baseUrl: string;
  apiKey: string;
  webhookSecret: string;
  /** The CRM's base URL. */
  crmUrl: string;
  /** A JSON file where the sync keeps the time of the last event it handled (its catch-up point). */
  statePath: string;
  /**
   * The event kinds the sync follows: those its webhook endpoint chose. Catching up reads the same
   * kinds from the feed and skips the others (default: every kind the feed holds).
   */
  events?: readonly string[];
}

interface SyncState {
  /** The `createdAt` of the newest event handled, and the ids handled at that instant. */
  lastEventAt: string | null;
  handledAtLast: string[];
}

/** Events about an application: each updates its contact and deal. */
function mortgageIdOf(event: WebhookEvent): string | null {
  return event.event.startsWith('application.') && 'mortgageId' in event && typeof event.mortgageId === 'string' ? event.mortgageId : null;
}

export function createCrmSync(options: CrmSyncOptions) {
  const client = createMortgageClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });

  function readState(): SyncState {
    try {
      return JSON.parse(readFileSync(options.statePath, 'utf8')) as SyncState;
    } catch {
      return { lastEventAt: null, handledAtLast: [] };
    }
  }

  function remember(eventId: string, createdAt: string): void {
    const state = readState();
    if (state.lastEventAt !== null && createdAt < state.lastEventAt) return;
    const handledAtLast = state.lastEventAt === createdAt ? [...state.handledAtLast, eventId] : [eventId];
    writeFileSync(options.statePath, JSON.stringify({ lastEventAt: createdAt, handledAtLast }));
  }

  async function upsert(path: string, body: unknown): Promise<void> {
    const response = await fetch(`${options.crmUrl.replace(/\/+$/, '')}${path}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`the CRM answered ${response.status} to PUT ${path}`);
  }

  /** Brings the application's contact and deal in the CRM up to date. */
  async function syncApplication(mortgageId: string): Promise<void> {
    const { data: application } = await client.api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId } } });
    if (!application) return;
    const email = application.applicant.email;
    if (email) await upsert(`/contacts/${encodeURIComponent(email)}`, { email, name: application.applicant.name });
    await upsert(`/deals/${encodeURIComponent(mortgageId)}`, {
      mortgageId,
      contactEmail: email,
      amount: application.applicant.amount,
      term: application.term,
      stage: application.status,
    });
  }

  async function handle(event: WebhookEvent): Promise<void> {
    const mortgageId = mortgageIdOf(event);
    if (mortgageId) await syncApplication(mortgageId);
  }

  /**
   * Reads the events feed back to the last event handled (all of it on the first run, as far as
   * the feed's retention goes) and handles every event since, oldest first. Returns how many.
   */
  async function catchUp(): Promise<number> {
    const state = readState();
    const missed = [];
    const query = state.lastEventAt ? { createdFrom: state.lastEventAt } : {};
    for await (const event of client.list('/v1/events', { query })) {
      if (options.events && !options.events.includes(event.payload.event)) continue;
      if (event.createdAt === state.lastEventAt && state.handledAtLast.includes(event.eventId)) continue;
      missed.push(event);
    }
    missed.reverse();
    for (const event of missed) {
      await handle(event.payload as WebhookEvent);
      remember(event.eventId, event.createdAt);
    }
    return missed.length;
  }

  function readBody(req: http.IncomingMessage): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
  }

  /** The webhook receiver: 401 for a delivery it cannot verify, 500 (the service retries) when the CRM or the API failed. */
  const server = http.createServer((req, res) => {
    readBody(req)
      .then(async (body) => {
        let event: WebhookEvent;
        try {
          event = verifyWebhook(options.webhookSecret, body, req.headers);
        } catch (err) {
          if (err instanceof WebhookVerificationError) return 401;
          throw err;
        }
        await handle(event);
        // The delivery's time (webhook-timestamp) is when it was sent; the feed's createdAt is read back on catch-up.
        const { data } = await client.api.GET('/v1/events/{eventId}', { params: { path: { eventId: String(req.headers['webhook-id']) } } });
        if (data) remember(data.eventId, data.createdAt);
        return 200;
      })
      .catch(() => 500)
      .then((status) => res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status === 200 ? 'ok' : 'not handled'));
  });

  return { server, catchUp };
}
