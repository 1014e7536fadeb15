import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dereference } from '../../../src/contract/spec.ts';
import { eventKind, eventTypes, payloadProblem } from '../../../src/events/catalog.ts';

const spec = dereference(JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8')));

describe('event catalog', () => {
  it("names exactly the spec's webhooks, and the WebhookEventType enum lists the same names", () => {
    expect(eventTypes()).toEqual(Object.keys(spec.webhooks));
    expect(spec.components.schemas.WebhookEventType.enum).toEqual(Object.keys(spec.webhooks));
  });

  it("gives each event's first named example, which its own schema accepts", () => {
    for (const type of eventTypes()) {
      const examples = spec.webhooks[type].post.requestBody.content['application/json'].examples;
      expect(eventKind(type).example).toEqual(Object.values<{ value: unknown }>(examples)[0]!.value);
      expect(payloadProblem(eventKind(type).example)).toBeNull();
    }
  });

  it('explains what is wrong with a payload that does not match', () => {
    expect(payloadProblem({ event: 'application.rejected' })).toMatch(/one of application\.approved, document\.uploaded/);
    expect(payloadProblem({ ...eventKind('application.approved').example, extra: 1 })).toMatch(/must NOT have additional properties/);
    expect(payloadProblem({ event: 'document.uploaded', mortgageId: 'mtg-x' })).toMatch(/mortgageId|required/);
  });
});
