/**
 * Verifying a webhook delivery: deliveries are signed per the Standard Webhooks specification
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the endpoint's `whsec_…` secret.
 * Verify the raw body, exactly as received, before parsing it.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { webhooks } from './generated/api.ts';

export type WebhookEventType = keyof webhooks & string;

/** A delivered payload: discriminate on `event`. */
export type WebhookEvent = {
  [K in WebhookEventType]: webhooks[K]['post']['requestBody']['content']['application/json'];
}[WebhookEventType];

export { WebhookVerificationError };

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function plainHeaders(headers: HeaderBag): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => (out[name.toLowerCase()] = value));
    return out;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/**
 * Checks the signature and the timestamp (5 minutes of tolerance) and returns the typed event.
 * Throws WebhookVerificationError when the delivery is not genuine, or too old (a replay).
 * During a secret rotation, pass each secret in turn, or verify with the new one: the service
 * signs with both while both are valid.
 */
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: HeaderBag): WebhookEvent {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const event = new Webhook(secret).verify(payload, plainHeaders(headers)) as WebhookEvent;
  if (!event || typeof event !== 'object' || typeof (event as { event?: unknown }).event !== 'string') {
    throw new WebhookVerificationError('The payload is not an event');
  }
  return event;
}
