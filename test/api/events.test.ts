/**
 * The events feed (GET /v1/events, GET /v1/events/{eventId}): every event of the caller's account,
 * newest first, with exactly the payload its webhooks carry; filtered by kind and time, paged by
 * cursor, scoped to the account, without test events; and kept for EVENT_RETENTION_DAYS, after
 * which the feed hides an event at once and the background sweep deletes it with its deliveries
 * and delivery log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { publish } from '../../src/events/outbox.ts';
import { newId } from '../../src/ids.ts';
import { startBackgroundWork } from '../../src/background.ts';
import { EVENT_PRUNE_INTERVAL_MS, pruneExpiredEvents } from '../../src/services/events.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock, startReceiver } from '../helpers/webhookReceiver.ts';

const DAY = 24 * 3_600_000;
const clock = manualClock(Date.parse('2026-11-21T18:30:00.000Z'));
let app: TestApp;
let owner: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ clock });
  owner = await app.newAccount('Feed Lending');
  other = await app.newAccount('Other Lending');
});
afterAll(() => app?.close());

/** An application approved at submission: the service publishes application.approved. */
async function approvedApplication(account: TestAccount, name = 'Jane Doe'): Promise<string> {
  const { data } = await account.client.POST('/v1/applications', {
    body: { applicant: { name, amount: 350000, email: 'jane@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 }, term: 30, propertyValue: 450000 },
  });
  const { data: submitted } = await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
  expect(submitted!.status).toBe('approved');
  return data!.mortgageId;
}

/** A document uploaded to a draft: the service publishes document.uploaded. */
async function uploadedDocument(account: TestAccount): Promise<{ mortgageId: string; documentId: string }> {
  const { data } = await account.client.POST('/v1/applications', { body: { applicant: { name: 'Doc Owner', amount: 200000 }, term: 30 } });
  const form = new FormData();
  form.set('documentType', 'bank_statement');
  form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'statement.pdf');
  const response = await app.fetch(`/v1/applications/${data!.mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${account.apiKey}` }, body: form });
  expect(response.status).toBe(201);
  return { mortgageId: data!.mortgageId, documentId: ((await response.json()) as { documentId: string }).documentId };
}

/** Publishes an application.approved event for the account straight into the outbox, at the clock's time. */
async function published(account: TestAccount, name = 'Direct Publish'): Promise<string> {
  const payload = { event: 'application.approved' as const, mortgageId: newId('mtg'), status: 'approved' as const, applicant: { name, amount: 100000 }, timestamp: clock.now().toISOString() };
  const { eventId } = await app.ctx.store.transaction((tx) => publish(tx, { accountId: account.accountId, payload, occurredAt: clock.now() }));
  return eventId;
}

async function feed(account: TestAccount, query: Record<string, string | number> = {}) {
  const { data, error, response } = await account.client.GET('/v1/events', { params: { query: query as never } });
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

describe('listEvents', () => {
  it("lists the account's events newest first, each with its id, kind, time and the payload its webhooks carry", async () => {
    const account = await app.newAccount('Newest First');
    clock.advance(1_000);
    const approvedAt = clock.now().toISOString();
    const mortgageId = await approvedApplication(account);
    clock.advance(1_000);
    const uploadedAt = clock.now().toISOString();
    const doc = await uploadedDocument(account);

    const { data: everything, nextCursor } = await feed(account);
    expect(nextCursor).toBeNull();
    // The submission also published application.submitted and the approval's conditions, at the same moment.
    expect(everything.map((e) => [e.event, e.createdAt]).slice(1).sort()).toEqual([
      ['application.approved', approvedAt],
      ['application.conditions_updated', approvedAt],
      ['application.submitted', approvedAt],
    ]);
    const data = everything.filter((e) => e.event === 'document.uploaded' || e.event === 'application.approved');
    expect(data.map((e) => [e.event, e.createdAt])).toEqual([
      ['document.uploaded', uploadedAt],
      ['application.approved', approvedAt],
    ]);
    expect(data[0]!.payload).toEqual({
      event: 'document.uploaded',
      mortgageId: doc.mortgageId,
      documentType: 'bank_statement',
      url: `${app.baseUrl}/v1/applications/${doc.mortgageId}/documents/${doc.documentId}/content`,
    });
    expect(data[1]!.payload).toEqual({ event: 'application.approved', mortgageId, status: 'approved', applicant: { name: 'Jane Doe', amount: 350000 }, timestamp: approvedAt });
    expect(data.every((e) => /^evt-[0-9a-z]{26}$/.test(e.eventId))).toBe(true);
  });

  it('the payload is byte for byte the body of the webhook delivery of the same event', async () => {
    const delivering = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
    const dispatcher = new WebhookDispatcher(delivering.ctx).start();
    const receiver = await startReceiver();
    try {
      const account = await delivering.newAccount();
      await account.client.POST('/v1/webhooks', { body: { url: receiver.url(), events: ['application.approved'] } });
      const { data } = await account.client.POST('/v1/applications', {
        body: { applicant: { name: 'Zoë Ünicode', amount: 350000.5, email: 'z@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 }, term: 30, propertyValue: 450000 },
      });
      await account.client.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
      const [delivery] = await receiver.waitFor(1);
      const { data: events } = await account.client.GET('/v1/events', { params: { query: { event: 'application.approved' } } });
      expect(events!.data[0]!.eventId).toBe(delivery!.headers['webhook-id']);
      expect(JSON.stringify(events!.data[0]!.payload)).toBe(delivery!.body);
    } finally {
      await dispatcher.stop();
      await receiver.close();
      await delivering.close();
    }
  }, 30_000);

  it('filters by event kind', async () => {
    const account = await app.newAccount('By Kind');
    await approvedApplication(account);
    await uploadedDocument(account);
    await approvedApplication(account, 'John Roe');
    expect((await feed(account, { event: 'application.approved' })).data.map((e) => e.event)).toEqual(['application.approved', 'application.approved']);
    expect((await feed(account, { event: 'document.uploaded' })).data.map((e) => e.event)).toEqual(['document.uploaded']);
  });

  it('filters by time: createdFrom inclusive, createdTo exclusive, as dates or date-times with an offset', async () => {
    const account = await app.newAccount('By Time');
    clock.set(Date.parse('2026-11-22T10:00:00.000Z'));
    const first = await published(account);
    clock.set(Date.parse('2026-11-22T23:59:59.999Z'));
    const second = await published(account);
    clock.set(Date.parse('2026-11-23T00:00:00.000Z'));
    const third = await published(account);
    const ids = async (query: Record<string, string>) => (await feed(account, query)).data.map((e) => e.eventId);

    expect(await ids({ createdFrom: '2026-11-22', createdTo: '2026-11-23' })).toEqual([second, first]);
    expect(await ids({ createdFrom: '2026-11-22T23:59:59.999Z' })).toEqual([third, second]);
    expect(await ids({ createdTo: '2026-11-22T11:00:00+01:00' })).toEqual([]); // 10:00Z, exclusive
    expect(await ids({ createdTo: '2026-11-22T12:00:00+01:00' })).toEqual([first]);
    expect(await ids({ createdFrom: '2026-11-23T01:00:00+01:00' })).toEqual([third]);
    clock.advance(DAY);
  });

  it('refuses a time range that is empty by construction, and a date that does not exist (400)', async () => {
    const range = await owner.client.GET('/v1/events', { params: { query: { createdFrom: '2026-11-22', createdTo: '2026-11-22' } } });
    expect(range.response.status).toBe(400);
    expect(range.error).toMatchObject({ code: 'invalid_date_range', errors: [{ pointer: '#/query/createdTo' }] });

    const impossible = await owner.client.GET('/v1/events', { params: { query: { createdFrom: '2026-02-30' } } });
    expect(impossible.response.status).toBe(400);
    expect(impossible.error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '#/query/createdFrom' }] });

    const kind = await app.fetch('/v1/events?event=application.rejected', { headers: { Authorization: `Bearer ${owner.apiKey}` } });
    expect(kind.status).toBe(400);
    expect(await kind.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '#/query/event' }] });
  });

  it('pages newest first with the cursor: every event exactly once', async () => {
    const account = await app.newAccount('Paged');
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      clock.advance(10);
      made.push(await published(account, `Applicant ${i}`));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await feed(account, { limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.data.map((e) => e.eventId));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...made].reverse());

    const wrong = await account.client.GET('/v1/events', { params: { query: { cursor: Buffer.from(JSON.stringify({ after: newId('whk') })).toString('base64url') } } });
    expect(wrong.response.status).toBe(400);
    expect(wrong.error).toMatchObject({ code: 'invalid_cursor' });
  });

  it('leaves out test events sent to an endpoint', async () => {
    const account = await app.newAccount('Tests Left Out');
    const real = await published(account);
    const { data: endpoint } = await account.client.POST('/v1/webhooks', { body: { url: 'https://hooks.feed.example/events', events: ['application.approved'] } });
    const { data: test } = await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: endpoint!.webhookId } }, body: { event: 'document.uploaded' } });
    expect((await feed(account)).data.map((e) => e.eventId)).toEqual([real]);
    const { response } = await account.client.GET('/v1/events/{eventId}', { params: { path: { eventId: test!.eventId } } });
    expect(response.status).toBe(404);
  });

  it('a member key reads the feed', async () => {
    const account = await app.newAccount('Member Reads');
    const eventId = await published(account);
    const { data, response } = await account.member.GET('/v1/events', {});
    expect(response.status).toBe(200);
    expect(data!.data.map((e) => e.eventId)).toEqual([eventId]);
  });

  it("another account's events are not listed", async () => {
    const mine = await published(owner);
    const theirs = await published(other);
    const ownerIds = (await feed(owner, { limit: 100 })).data.map((e) => e.eventId);
    const otherIds = (await feed(other, { limit: 100 })).data.map((e) => e.eventId);
    expect(ownerIds).toContain(mine);
    expect(ownerIds).not.toContain(theirs);
    expect(otherIds).toContain(theirs);
    expect(otherIds).not.toContain(mine);
  });
});

describe('getEvent', () => {
  it('answers one event of the account as the feed shows it', async () => {
    const mortgageId = await approvedApplication(owner);
    const { data: page } = await owner.client.GET('/v1/events', { params: { query: { limit: 1 } } });
    const listed = page!.data[0]!;
    expect(listed.payload).toMatchObject({ mortgageId });
    const { data, response } = await owner.member.GET('/v1/events/{eventId}', { params: { path: { eventId: listed.eventId } } });
    expect(response.status).toBe(200);
    expect(data).toEqual(listed);
  });

  it("another account's event is 404, as is an id that names none", async () => {
    const theirs = await published(other);
    const foreign = await owner.client.GET('/v1/events/{eventId}', { params: { path: { eventId: theirs } } });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ code: 'not_found' });
    const unknown = await owner.client.GET('/v1/events/{eventId}', { params: { path: { eventId: newId('evt') } } });
    expect(unknown.response.status).toBe(404);
    const malformed = await app.fetch('/v1/events/mtg-01jdz8k3n4q2v6x9b7c5t1r0aa', { headers: { Authorization: `Bearer ${owner.apiKey}` } });
    expect(malformed.status).toBe(400);
  });
});

describe('retention (EVENT_RETENTION_DAYS)', () => {
  const retentionClock = manualClock(Date.parse('2026-11-01T00:00:00.000Z'));
  let kept: TestApp;
  let dispatcher: WebhookDispatcher;
  beforeAll(async () => {
    kept = await startTestApp({ clock: retentionClock, env: { EVENT_RETENTION_DAYS: '7', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
    dispatcher = new WebhookDispatcher(kept.ctx).start();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await kept?.close();
  });

  it('an event past retention leaves the feed at once, and the sweep deletes it with its deliveries and delivery log', async () => {
    const receiver = await startReceiver();
    try {
      const account = await kept.newAccount();
      const { data: endpoint } = await account.client.POST('/v1/webhooks', { body: { url: receiver.url(), events: ['application.approved'] } });
      const webhookId = endpoint!.webhookId;
      const publishNow = (name: string) =>
        kept.ctx.store.transaction((tx) =>
          publish(tx, {
            accountId: account.accountId,
            payload: { event: 'application.approved', mortgageId: newId('mtg'), status: 'approved', applicant: { name, amount: 1000 }, timestamp: retentionClock.now().toISOString() },
            occurredAt: retentionClock.now(),
          }),
        );
      const old = (await publishNow('Old')).eventId;
      await receiver.waitFor(1);
      retentionClock.advance(6 * DAY);
      const recent = (await publishNow('Recent')).eventId;
      await receiver.waitFor(2);
      const attempts = async () => {
        const { data } = await account.client.GET('/v1/webhooks/{webhookId}/deliveries', { params: { path: { webhookId } } });
        return data!.data.map((a) => a.eventId).sort();
      };
      await expect.poll(attempts).toEqual([old, recent].sort());

      retentionClock.advance(DAY); // `old` is exactly 7 days old: still kept
      expect((await account.client.GET('/v1/events', {})).data!.data.map((e) => e.eventId)).toEqual([recent, old]);
      retentionClock.advance(1);
      expect((await account.client.GET('/v1/events', {})).data!.data.map((e) => e.eventId)).toEqual([recent]);
      expect((await account.client.GET('/v1/events/{eventId}', { params: { path: { eventId: old } } })).response.status).toBe(404);

      const rowsOf = (eventId: string) =>
        kept.ctx.store.read(async (db) => ({
          events: Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_events WHERE id = ?', [eventId]))!.n),
          deliveries: Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE event_id = ?', [eventId]))!.n),
          attempts: Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_delivery_attempts WHERE event_id = ?', [eventId]))!.n),
        }));
      expect(await rowsOf(old)).toEqual({ events: 1, deliveries: 1, attempts: 1 }); // hidden, not yet deleted
      expect(await pruneExpiredEvents(kept.ctx)).toBe(1);
      expect(await rowsOf(old)).toEqual({ events: 0, deliveries: 0, attempts: 0 });
      expect(await rowsOf(recent)).toEqual({ events: 1, deliveries: 1, attempts: 1 });
      expect(await attempts()).toEqual([recent]);
      expect(await pruneExpiredEvents(kept.ctx)).toBe(0);
    } finally {
      await receiver.close();
    }
  }, 30_000);

  it('the sweep is background work of the server, run hourly', async () => {
    const tasks = startBackgroundWork(kept.ctx);
    await Promise.all(tasks.map((t) => t.stop()));
    expect(tasks.map((t) => t.name)).toContain('event-retention');
    expect(EVENT_PRUNE_INTERVAL_MS).toBe(3_600_000);
  });

  it('the sweep deletes in batches until nothing older is left', async () => {
    const account = await kept.newAccount('Many Old Events');
    const start = retentionClock.now().getTime();
    await kept.ctx.store.transaction(async (tx) => {
      for (let i = 0; i < 1_203; i++) {
        await publish(tx, {
          accountId: account.accountId,
          payload: { event: 'application.approved', mortgageId: newId('mtg'), status: 'approved', applicant: { name: `Old ${i}`, amount: 1000 }, timestamp: new Date(start).toISOString() },
          occurredAt: new Date(start),
        });
      }
    });
    retentionClock.advance(8 * DAY);
    expect(await pruneExpiredEvents(kept.ctx)).toBeGreaterThanOrEqual(1_203);
    const left = await kept.ctx.store.read((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM webhook_events WHERE account_id = ?', [account.accountId]));
    expect(Number(left!.n)).toBe(0);
  }, 60_000);
});
