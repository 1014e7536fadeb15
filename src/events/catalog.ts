/**
 * The event kinds the service sends, read from the contract: the `webhooks` section of the
 * bundled spec (generated/openapi.json) names them, gives each payload's JSON Schema and a named
 * example. Registration, the outbox, test events and the partner scripts all read it from here,
 * so a new event kind in the spec is one edit.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { webhooks } from '../../generated/api.d.ts';
import { readFileSync } from 'node:fs';
import { createAjv, dereference, loadBundledSpec } from '../contract/spec.ts';
import { CURRENT_VERSION } from '../domain/versions/registry.ts';

export type WebhookEventType = keyof webhooks & string;

/** A payload of any event kind, as the spec's `webhooks` section defines it. */
export type WebhookEventPayload = {
  [K in WebhookEventType]: webhooks[K]['post']['requestBody']['content']['application/json'];
}[WebhookEventType];

interface SpecMediaType {
  schema: Record<string, unknown>;
  examples?: Record<string, { value: unknown }>;
}

interface SpecWebhook {
  post: { summary?: string; description?: string; requestBody: { content: { 'application/json': SpecMediaType } } };
}

export interface EventKind {
  type: WebhookEventType;
  /** The spec's summary and description of the event (what the dashboard shows beside its name). */
  summary: string;
  description: string;
  /** The first named example of the spec: what a test event and `webhooks:send` deliver. */
  example: WebhookEventPayload;
  validate: ValidateFunction;
}

/**
 * The payload schema with every object closed to fields it does not name. The spec leaves the
 * payloads open, so that partners accept fields added later (an additive change); what the service
 * itself sends is exactly what the spec names, so the outbox checks payloads against the closed form.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'examples' || key === 'const' || key === 'enum' ? value : closed(value)]));
  if (copy.properties && typeof copy.properties === 'object' && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

function loadCatalog(spec: { webhooks?: Record<string, SpecWebhook> } = loadBundledSpec() as { webhooks?: Record<string, SpecWebhook> }): Map<string, EventKind> {
  const ajv = createAjv({ allErrors: true });
  const kinds = new Map<string, EventKind>();
  for (const [type, hook] of Object.entries(spec.webhooks ?? {})) {
    const media = hook.post.requestBody.content['application/json'];
    const first = Object.values(media.examples ?? {})[0];
    if (!first) throw new Error(`webhook ${type} of the spec has no named example`);
    kinds.set(type, {
      type: type as WebhookEventType,
      summary: hook.post.summary ?? type,
      description: (hook.post.description ?? '').trim(),
      example: first.value as WebhookEventPayload,
      validate: ajv.compile(closed(media.schema) as Record<string, unknown>),
    });
  }
  return kinds;
}

let catalog: Map<string, EventKind> | undefined;

function kinds(): Map<string, EventKind> {
  catalog ??= loadCatalog();
  return catalog;
}

/** Every event name of the spec, in the spec's order. */
export function eventTypes(): WebhookEventType[] {
  return [...kinds().keys()] as WebhookEventType[];
}

export function isEventType(name: string): name is WebhookEventType {
  return kinds().has(name);
}

export function eventKind(type: WebhookEventType): EventKind {
  const kind = kinds().get(type);
  if (!kind) throw new Error(`unknown webhook event type ${type}`);
  return kind;
}

/** Describes why `payload` does not match its event's schema, or returns null when it does. */
export function payloadProblem(payload: unknown): string | null {
  const type = (payload as { event?: unknown } | null)?.event;
  if (typeof type !== 'string' || !isEventType(type)) {
    return `payload.event must be one of ${eventTypes().join(', ')}, got ${JSON.stringify(type)}`;
  }
  const kind = eventKind(type);
  if (kind.validate(payload)) return null;
  return (kind.validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
}

/** The catalogues of released versions older than the current one, from their frozen bundles (openapi/versions/), read once each. */
const olderCatalogs = new Map<string, Map<string, EventKind>>();

function kindsIn(version: string): Map<string, EventKind> {
  if (version === CURRENT_VERSION) return kinds();
  let found = olderCatalogs.get(version);
  if (!found) {
    // Every version but the current one is released, so it has its frozen bundle.
    const bundle = dereference(JSON.parse(readFileSync(new URL(`../../openapi/versions/${version}.json`, import.meta.url), 'utf8'))) as { webhooks?: Record<string, SpecWebhook> };
    olderCatalogs.set(version, (found = loadCatalog(bundle)));
  }
  return found;
}

/**
 * Why `payload` is not an event as API version `version` delivers it (a kind that version does not
 * have, or a payload its schema there refuses), or null: what a receiver pinned to `version` accepts.
 */
export function payloadProblemIn(payload: unknown, version: string): string | null {
  const catalogue = kindsIn(version);
  const type = (payload as { event?: unknown } | null)?.event;
  const kind = typeof type === 'string' ? catalogue.get(type) : undefined;
  if (!kind) return `payload.event must be one of API version ${version}'s events, ${[...catalogue.keys()].join(', ')}, got ${JSON.stringify(type)}`;
  if (kind.validate(payload)) return null;
  return (kind.validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
}
