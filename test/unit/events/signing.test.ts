import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newWebhookSecret, secretHint, signDelivery, signingSecrets } from '../../../src/events/signing.ts';

const ID = 'evt-01jdz8q5s7u9w1y3a5c7e9g1j3';
const BODY = '{"event":"application.approved","mortgageId":"mtg-01jdz8k3n4q2v6x9b7c5t1r0aa","status":"approved","applicant":{"name":"Zoë Ångström","amount":350000},"timestamp":"2026-11-21T18:30:00.000Z"}';

describe('signDelivery', () => {
  it('signs id.timestamp.body with HMAC-SHA256 of the decoded secret, as Standard Webhooks defines', () => {
    const secret = newWebhookSecret();
    const at = new Date();
    const headers = signDelivery(ID, at, BODY, [secret]);
    const ts = Math.floor(at.getTime() / 1000);
    const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${ID}.${ts}.${BODY}`).digest('base64');
    expect(headers).toEqual({ 'webhook-id': ID, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${expected}` });
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  it('with two secrets sends two signatures; the standardwebhooks package accepts either secret', () => {
    const current = newWebhookSecret();
    const previous = newWebhookSecret();
    const headers = signDelivery(ID, new Date(), BODY, [current, previous]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(BODY, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(BODY, headers)).toBeTruthy();
    expect(() => new Webhook(newWebhookSecret()).verify(BODY, headers)).toThrow('No matching signature found');
  });

  it('a changed byte of the body fails verification', () => {
    const secret = newWebhookSecret();
    const headers = signDelivery(ID, new Date(), BODY, [secret]);
    expect(() => new Webhook(secret).verify(BODY.replace('350000', '350001'), headers)).toThrow('No matching signature found');
  });

  it('refuses to sign with no secret', () => {
    expect(() => signDelivery(ID, new Date(), BODY, [])).toThrow();
  });
});

describe('secrets', () => {
  it('are whsec_ and the base64 of 32 random bytes, never the same twice', () => {
    const a = newWebhookSecret();
    const b = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(secretHint(a)).toBe(`whsec_…${a.slice(-4)}`);
  });

  it('the previous secret signs only until its overlap ends', () => {
    const endpoint = { secret: 'whsec_new', previousSecret: 'whsec_old', previousSecretExpiresAt: '2026-11-22T10:00:00.000Z' };
    expect(signingSecrets(endpoint, new Date('2026-11-22T09:59:59.999Z'))).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(endpoint, new Date('2026-11-22T10:00:00.000Z'))).toEqual(['whsec_new']);
    expect(signingSecrets({ secret: 'whsec_new', previousSecret: null, previousSecretExpiresAt: null }, new Date())).toEqual(['whsec_new']);
  });
});
