/**
 * The SDK's verifyWebhook (sdk/src/webhooks.ts) on its own, with deliveries signed here as the
 * service signs them (Standard Webhooks): the headers in the forms servers hand them over, and
 * genuinely signed payloads that are not events.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { EVENT_KINDS_BY_VERSION, verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../../sdk/src/index.ts';
import { CURRENT_VERSION, FIRST_VERSION, renderEvent, VERSIONS } from '../../src/domain/versions/registry.ts';
import { specWebhooks } from '../helpers/webhookReceiver.ts';

const secret = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
const EVENT = { event: 'document.uploaded', mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', documentType: 'income_proof', url: 'https://x.test/d' };

/** The Standard Webhooks headers of `body` signed now with `secret`. */
function signed(body: string, id = 'evt-01jdz8k3n4q2v6x9b7c5t1r0ac') {
  const timestamp = new Date();
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(id, timestamp, body) };
}

describe('verifyWebhook', () => {
  it('takes a header repeated as an array (as some servers hand repeated headers over): any of its signatures may match', () => {
    const body = JSON.stringify(EVENT);
    const headers = signed(body);
    const other = new Webhook(`whsec_${Buffer.from('another secret of 32 bytes!!!!!!').toString('base64')}`).sign('evt-x', new Date(), body);
    expect(verifyWebhook(secret, body, { ...headers, 'webhook-signature': [other, headers['webhook-signature']] })).toEqual(EVENT);
    expect(() => verifyWebhook(secret, body, { ...headers, 'webhook-signature': [other] })).toThrow(WebhookVerificationError);
    // Names in any case, and headers left undefined, as Node's IncomingHttpHeaders may hold them.
    expect(verifyWebhook(secret, body, { 'Webhook-Id': headers['webhook-id'], 'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'], 'webhook-signature': headers['webhook-signature'], 'x-other': undefined })).toEqual(EVENT);
  });

  it('types a rate lock event by its kind: the lock id, status and expiry without a cast', () => {
    const lock = {
      event: 'rate_lock.expiring',
      lockId: 'lck-01jdz9a1b2c3d4e5f6g7h8j9k0',
      quoteId: 'qte-01jdz8k3n4q2v6x9b7c5t1r0aa',
      mortgageId: null,
      status: 'active',
      periodDays: 30,
      interestRate: 6.5,
      expiresAt: '2026-12-21T18:30:00.000Z',
      timestamp: '2026-12-18T18:30:00.000Z',
    };
    const body = JSON.stringify(lock);
    const event = verifyWebhook(secret, body, signed(body));
    if (event.event !== 'rate_lock.expiring') throw new Error(`unexpected ${event.event}`);
    const seen: { lockId: string; status: 'active' | 'expired' | 'cancelled'; expiresAt: string; mortgageId: string | null } = event;
    expect(seen).toEqual(lock);
  });

  it('refuses a genuinely signed payload that is not an event: empty, null, not an object, or without a string `event`', () => {
    for (const body of ['', 'null', '"document.uploaded"', '42', '[]', '{}', '{"event":5}', '{"type":"document.uploaded"}']) {
      const verify = () => verifyWebhook(secret, body, signed(body));
      expect(verify, body).toThrow(WebhookVerificationError);
      expect(verify, body).toThrow('The payload is not an event');
    }
  });

  it("returns each lending event typed by its `event`: the spec's samples of the new kinds, read through their own fields", () => {
    /** What a partner's handler reads of each kind; it compiles only if verifyWebhook's type knows the kind's fields. */
    const summary = (event: WebhookEvent): string => {
      switch (event.event) {
        case 'application.submitted':
        case 'application.referred':
        case 'application.withdrawn':
        case 'application.cleared_to_close':
          return `${event.status} ${event.applicant.name}`;
        case 'application.declined':
          return `${event.status} by ${event.decidedBy}`;
        case 'application.conditions_updated':
          return `${event.conditions.length} conditions, ${event.conditions.filter((c) => c.status === 'open').length} open`;
        default:
          return event.event;
      }
    };
    const seen: Record<string, string> = {};
    for (const kind of ['application.submitted', 'application.referred', 'application.declined', 'application.withdrawn', 'application.conditions_updated', 'application.cleared_to_close']) {
      const body = JSON.stringify(specWebhooks[kind]!.example);
      const event = verifyWebhook(secret, body, signed(body));
      expect(event).toEqual(specWebhooks[kind]!.example);
      seen[kind] = summary(event);
    }
    expect(seen).toEqual({
      'application.submitted': 'submitted Jane Doe',
      'application.referred': 'referred Jane Doe',
      'application.declined': 'declined by underwriting_rules',
      'application.withdrawn': 'withdrawn Jane Doe',
      'application.conditions_updated': '2 conditions, 1 open',
      'application.cleared_to_close': 'clear_to_close Jane Doe',
    });
  });
});

describe('verifyWebhook in an API version', () => {
  const APPROVED = { event: 'application.approved', mortgageId: 'mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', status: 'approved', applicant: { name: 'Jane Doe', amount: 350000 }, timestamp: '2026-11-21T18:30:00.000Z' };

  it("accepts the interface document's two events, the same bytes, in every version, typed by the version", () => {
    for (const version of VERSIONS) {
      for (const event of [APPROVED, EVENT]) {
        const body = JSON.stringify(event);
        expect(verifyWebhook(secret, body, signed(body), { apiVersion: version }), `${event.event} in ${version}`).toEqual(event);
      }
    }
    const body = JSON.stringify(APPROVED);
    const first = verifyWebhook(secret, body, signed(body), { apiVersion: '2026-11-21' });
    // Compiles only while the first version's type has exactly its two kinds.
    const kind: 'application.approved' | 'document.uploaded' = first.event;
    expect(kind).toBe('application.approved');
  });

  it('refuses a genuine delivery of a kind the version does not have, and takes it in the version that has it', () => {
    const lock = { ...specWebhooks['rate_lock.created']!.example } as Record<string, unknown>;
    const body = JSON.stringify(lock);
    expect(() => verifyWebhook(secret, body, signed(body), { apiVersion: FIRST_VERSION })).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(secret, body, signed(body), { apiVersion: FIRST_VERSION })).toThrow(`rate_lock.created is not an event of API version ${FIRST_VERSION}`);
    expect(verifyWebhook(secret, body, signed(body), { apiVersion: CURRENT_VERSION })).toEqual(lock);
    expect(verifyWebhook(secret, body, signed(body))).toEqual(lock);
  });

  it('lists for each version the kinds the service delivers in it (the registry renders them)', () => {
    expect(Object.keys(EVENT_KINDS_BY_VERSION)).toEqual([...VERSIONS]);
    for (const version of VERSIONS) {
      for (const kind of Object.keys(specWebhooks)) {
        const delivered = renderEvent(kind, specWebhooks[kind]!.example as never, version) !== null;
        expect(EVENT_KINDS_BY_VERSION[version]!.includes(kind), `${kind} in ${version}`).toBe(delivered);
      }
    }
  });

  it('refuses a version it does not know before looking at the delivery', () => {
    const body = JSON.stringify(APPROVED);
    for (const version of ['2026-11-25', 'latest', '']) {
      expect(() => verifyWebhook(secret, body, signed(body), { apiVersion: version }), version).toThrow(RangeError);
    }
  });
});
