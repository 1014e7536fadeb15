/**
 * Verifying a webhook delivery: deliveries are signed per the Standard Webhooks specification
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the endpoint's `whsec_…` secret.
 * Verify the raw body, exactly as received, before parsing it.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { webhooks } from './generated/api.ts';
import { EVENT_KINDS_BY_VERSION, type ApiVersionTypes } from './generated/versions.ts';

export type WebhookEventType = keyof webhooks & string;

/** A delivered payload: discriminate on `event`. */
export type WebhookEvent = {
  [K in WebhookEventType]: webhooks[K]['post']['requestBody']['content']['application/json'];
}[WebhookEventType];

/** A released version's types (`ApiVersionTypes` of sdk/src/generated/versions.ts). */
export type ReleasedApiVersion = keyof ApiVersionTypes;

type PayloadsOf<W> = { [K in keyof W]: W[K] extends { post: { requestBody?: { content: { 'application/json': infer P } } } } ? P : never }[keyof W];

/** A payload as an endpoint pinned to a released `V` receives it: only that version's kinds, in its shapes. */
export type WebhookEventIn<V extends ReleasedApiVersion> = PayloadsOf<ApiVersionTypes[V]['webhooks']>;

export { WebhookVerificationError };

export interface VerifyWebhookOptions {
  /**
   * The API version the endpoint is pinned to (its `apiVersion`): a genuine delivery of an event
   * kind that version does not have is refused (WebhookVerificationError), as the service never
   * sends one to such an endpoint, and the event is typed by that version when it is a released one.
   */
  apiVersion?: string;
}

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
export function verifyWebhook<V extends ReleasedApiVersion>(secret: string, body: string | Uint8Array, headers: HeaderBag, options: { apiVersion: V }): WebhookEventIn<V>;
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: HeaderBag, options?: VerifyWebhookOptions): WebhookEvent;
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: HeaderBag, options: VerifyWebhookOptions = {}): WebhookEvent {
  const kinds = options.apiVersion === undefined ? undefined : EVENT_KINDS_BY_VERSION[options.apiVersion];
  // Before anything is verified: a version this SDK does not know is the caller's mistake, not the sender's.
  if (options.apiVersion !== undefined && kinds === undefined) {
    throw new RangeError(`${options.apiVersion} is not an API version this SDK knows: ${Object.keys(EVENT_KINDS_BY_VERSION).join(', ')}`);
  }
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const event = new Webhook(secret).verify(payload, plainHeaders(headers)) as WebhookEvent;
  if (!event || typeof event !== 'object' || typeof (event as { event?: unknown }).event !== 'string') {
    throw new WebhookVerificationError('The payload is not an event');
  }
  if (kinds !== undefined && !kinds.includes(event.event)) {
    throw new WebhookVerificationError(`${event.event} is not an event of API version ${options.apiVersion}, which delivers ${kinds.join(', ')}`);
  }
  return event;
}
