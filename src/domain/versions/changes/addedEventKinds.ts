/**
 * A version change that adds event kinds: on the versions before it, events of those kinds are
 * neither delivered nor listed, an endpoint lists only the other kinds among the events it chose,
 * and the older bundle has neither their webhooks entries, their payload schemas nor their examples.
 * Every kind it does not name keeps its payload object (and so its bytes) as it is.
 */
import { ABSENT, eachObject, specAt, type Json, type VersionChange } from '../change.ts';

/** Responses that carry endpoints (`events`), events or delivery attempts (`event`). */
const EVENT_OPERATIONS = [
  'listWebhooks',
  'createWebhook',
  'getWebhook',
  'updateWebhook',
  'rotateWebhookSecret',
  'listWebhookDeliveries',
  'sendTestWebhookEvent',
  'listEvents',
  'getEvent',
];

export interface AddedEventKinds {
  version: string;
  name: string;
  description: string;
  /** The kinds the version adds. */
  kinds: readonly string[];
}

export function addedEventKinds({ version, name, description, kinds }: AddedEventKinds): VersionChange {
  const added = new Set(kinds);
  const known = (kind: Json | undefined) => typeof kind !== 'string' || !added.has(kind);

  /** An endpoint (`events`) or an event or delivery attempt (`event`) as the older version has it; null when it has no such item. */
  function downgradeItem(item: Json): Json | null {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    if (!known(item.event)) return null;
    if (Array.isArray(item.events) && !item.events.every(known)) return { ...item, events: item.events.filter(known) };
    return item;
  }

  return {
    version,
    name,
    description,
    touches: { operations: EVENT_OPERATIONS, schemas: ['WebhookEventType', 'Event', 'Webhook'], events: [...kinds] },
    downgradeResponse(operationId, body) {
      if (!EVENT_OPERATIONS.includes(operationId) || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
      if (Array.isArray(body.data)) return { ...body, data: body.data.map(downgradeItem).filter((item) => item !== null) };
      return downgradeItem(body) ?? ABSENT;
    },
    downgradeEvent: (type, payload) => (added.has(type) ? null : payload),
    downgradeSpec(spec) {
      // The payload schemas of the kinds the older version lacks, named by the webhooks section.
      const dropped = new Set<string>();
      const webhooks = specAt(spec, 'webhooks') ?? {};
      for (const kind of Object.keys(webhooks)) {
        if (!added.has(kind)) continue;
        const schema = specAt(webhooks, kind, 'post', 'requestBody', 'content', 'application/json', 'schema');
        if (typeof schema?.$ref === 'string') dropped.add(schema.$ref);
        delete webhooks[kind];
      }
      const type = specAt(spec, 'components', 'schemas', 'WebhookEventType');
      if (!type || !Array.isArray(type.enum)) throw new Error('The contract has no enum schema WebhookEventType');
      type.enum = type.enum.filter(known);
      // The examples as the older version answers them: other kinds' named examples dropped, lists filtered.
      eachObject(spec, (object) => {
        const examples = object.examples;
        if (examples === null || typeof examples !== 'object' || Array.isArray(examples)) return;
        for (const name of Object.keys(examples)) {
          const example = examples[name];
          if (example === null || typeof example !== 'object' || Array.isArray(example) || !('value' in example)) continue;
          const value = example.value!;
          if (value !== null && typeof value === 'object' && !Array.isArray(value) && Array.isArray(value.data)) value.data = value.data.map(downgradeItem).filter((item) => item !== null);
          else if (downgradeItem(value) === null) delete examples[name];
          else example.value = downgradeItem(value);
        }
      });
      // Where a payload is one of the kinds' payloads (the feed, a test event): keep the older version's.
      eachObject(spec, (object) => {
        if (Array.isArray(object.oneOf)) object.oneOf = object.oneOf.filter((item) => !(item !== null && typeof item === 'object' && !Array.isArray(item) && dropped.has(item.$ref as string)));
      });
      // The dropped payloads' schemas, and those only they used (EventApplicant…), leave the older bundle.
      const schemas = specAt(spec, 'components', 'schemas') ?? {};
      let unused = [...dropped].map((ref) => ref.replace('#/components/schemas/', ''));
      while (unused.length > 0) {
        const named = new Set<string>();
        for (const name of unused) for (const ref of JSON.stringify(schemas[name] ?? null).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) named.add(ref[1]!);
        for (const name of unused) delete schemas[name];
        const text = JSON.stringify(spec);
        unused = [...named].filter((name) => name in schemas && !text.includes(`"#/components/schemas/${name}"`));
      }
    },
  };
}
