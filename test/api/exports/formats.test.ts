/**
 * Custom export formats (/v1/export-formats): create, list, read, replace and delete, by name
 * within the caller's account; admin keys write, member keys read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestAccount, type TestApp } from '../../helpers/testApp.ts';
import { manualClock } from '../../helpers/webhookReceiver.ts';

let app: TestApp;
let lender: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  lender = await app.newAccount('Harbor Lending');
});
afterAll(() => app?.close());

const CSV_DEFAULTS = {
  delimiter: ',',
  includeHeader: true,
  dateFormat: 'iso8601',
  decimalSeparator: '.',
  thousandsSeparator: '',
  moneyDecimals: 'minimal',
  booleanFormat: 'trueFalse',
  byteOrderMark: false,
};

describe('createExportFormat', () => {
  it('creates a CSV format and answers it with every default filled in', async () => {
    const { data, response } = await lender.client.POST('/v1/export-formats', {
      body: { name: 'lender-csv', base: 'csv', description: 'Funding report', csv: { delimiter: ';', columns: [{ field: 'mortgageId' }, { field: 'applicant.amount', header: 'Amount' }] } },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      name: 'lender-csv',
      base: 'csv',
      description: 'Funding report',
      csv: { ...CSV_DEFAULTS, delimiter: ';', columns: [{ field: 'mortgageId', header: 'mortgageId' }, { field: 'applicant.amount', header: 'Amount' }] },
    });
    expect(data!.createdAt).toBe(data!.updatedAt);
  });

  it('creates a MISMO format, which has no CSV options', async () => {
    const { data, response } = await lender.client.POST('/v1/export-formats', { body: { name: 'mismo-34', base: 'mismo' } });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ name: 'mismo-34', base: 'mismo', description: null, csv: null });
  });

  it('refuses CSV options on a MISMO format (400)', async () => {
    const { error, response } = await lender.client.POST('/v1/export-formats', { body: { name: 'mixed', base: 'mismo', csv: { delimiter: ';' } } });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/csv' }] });
  });

  it('refuses a name that is taken (409), a built-in name (422), and one of the wrong form (400)', async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'taken', base: 'csv' } });
    const taken = await lender.client.POST('/v1/export-formats', { body: { name: 'taken', base: 'mismo' } });
    expect(taken.response.status).toBe(409);
    expect(taken.error).toMatchObject({ code: 'format_name_taken' });
    for (const name of ['json', 'ndjson', 'csv']) {
      const builtIn = await lender.client.POST('/v1/export-formats', { body: { name, base: 'csv' } });
      expect(builtIn.response.status).toBe(422);
      expect(builtIn.error).toMatchObject({ code: 'reserved_format_name' });
    }
    const wrong = await lender.client.POST('/v1/export-formats', { body: { name: 'Has Spaces', base: 'csv' } });
    expect(wrong.response.status).toBe(400);
    expect(wrong.error).toMatchObject({ errors: [{ pointer: '/name' }] });
  });

  it('refuses the same separator for decimals and thousands (422)', async () => {
    const { error, response } = await lender.client.POST('/v1/export-formats', {
      body: { name: 'ambiguous', base: 'csv', csv: { decimalSeparator: ',', thousandsSeparator: ',' } },
    });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'ambiguous_number_format' });
  });

  it('refuses an unknown column field and an unknown option (400)', async () => {
    const field = await app.fetch('/v1/export-formats', {
      method: 'POST',
      headers: { Authorization: `Bearer ${lender.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'bad-field', base: 'csv', csv: { columns: [{ field: 'applicant.ssn' }] } }),
    });
    expect(field.status).toBe(400);
    expect(await field.json()).toMatchObject({ errors: [{ pointer: '/csv/columns/0/field' }] });
    const option = await app.fetch('/v1/export-formats', {
      method: 'POST',
      headers: { Authorization: `Bearer ${lender.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'bad-option', base: 'csv', csv: { quoteAll: true } }),
    });
    expect(option.status).toBe(400);
  });

  it('holds at most 100 formats per account (422)', async () => {
    const full = await app.newAccount('Format Collector');
    for (let i = 0; i < 100; i++) {
      const { response } = await full.client.POST('/v1/export-formats', { body: { name: `format-${i}`, base: 'mismo' } });
      expect(response.status).toBe(201);
    }
    const { error, response } = await full.client.POST('/v1/export-formats', { body: { name: 'one-too-many', base: 'mismo' } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ code: 'too_many_formats' });
  });

  it('a member key may not create formats (403)', async () => {
    const { error, response } = await lender.member.POST('/v1/export-formats', { body: { name: 'by-member', base: 'csv' } });
    expect(response.status).toBe(403);
    expect(error).toMatchObject({ code: 'forbidden' });
  });

  it('replays the first response for a retried Idempotency-Key', async () => {
    const headers = { 'Idempotency-Key': 'format-retry-1' };
    const first = await lender.client.POST('/v1/export-formats', { body: { name: 'retried', base: 'mismo' }, headers });
    const second = await lender.client.POST('/v1/export-formats', { body: { name: 'retried', base: 'mismo' }, headers });
    expect(second.response.status).toBe(201);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
    expect(second.data).toEqual(first.data);
  });

  it('refuses a body that is not JSON (415) and one too large (413)', async () => {
    const text = await app.fetch('/v1/export-formats', {
      method: 'POST',
      headers: { Authorization: `Bearer ${lender.apiKey}`, 'Content-Type': 'text/plain' },
      body: 'name=x',
    });
    expect(text.status).toBe(415);
    const huge = await app.fetch('/v1/export-formats', {
      method: 'POST',
      headers: { Authorization: `Bearer ${lender.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'huge', base: 'csv', description: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
  });
});

describe('listExportFormats', () => {
  it('pages the account’s formats by name, and shows no other account’s', async () => {
    const fresh = await app.newAccount('Paging Lender');
    for (const name of ['c-format', 'a-format', 'b-format']) await fresh.client.POST('/v1/export-formats', { body: { name, base: 'mismo' } });
    const other = await app.newAccount('Other Lender');
    await other.client.POST('/v1/export-formats', { body: { name: 'a-other', base: 'mismo' } });

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { data, response } = await fresh.member.GET('/v1/export-formats', { params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } } });
      expect(response.status).toBe(200);
      seen.push(...data!.data.map((format) => format.name));
      cursor = data!.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(['a-format', 'b-format', 'c-format']);
  });

  it('refuses a tampered cursor (400) and needs credentials (401)', async () => {
    const tampered = await lender.client.GET('/v1/export-formats', { params: { query: { cursor: 'bm9wZQ' } } });
    expect(tampered.response.status).toBe(400);
    const anonymous = await app.anonymous.GET('/v1/export-formats');
    expect(anonymous.response.status).toBe(401);
  });
});

describe('getExportFormat', () => {
  it('answers a format by name, to a member key too', async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'readable', base: 'csv', csv: { dateFormat: 'date' } } });
    const { data, response } = await lender.member.GET('/v1/export-formats/{formatName}', { params: { path: { formatName: 'readable' } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ name: 'readable', base: 'csv', csv: { ...CSV_DEFAULTS, dateFormat: 'date' } });
  });

  it("another account's format is 404, as is an unknown one", async () => {
    const other = await app.newAccount('Other Lender');
    await other.client.POST('/v1/export-formats', { body: { name: 'theirs', base: 'mismo' } });
    const theirs = await lender.client.GET('/v1/export-formats/{formatName}', { params: { path: { formatName: 'theirs' } } });
    expect(theirs.response.status).toBe(404);
    const none = await lender.client.GET('/v1/export-formats/{formatName}', { params: { path: { formatName: 'never-made' } } });
    expect(none.response.status).toBe(404);
    expect(none.error).toMatchObject({ code: 'not_found' });
  });
});

describe('replaceExportFormat', () => {
  it('replaces everything but the name; options left out return to their defaults', async () => {
    const created = await lender.client.POST('/v1/export-formats', {
      body: { name: 'to-replace', base: 'csv', description: 'Before', csv: { delimiter: ';', moneyDecimals: 'two' } },
    });
    const { data, response } = await lender.client.PUT('/v1/export-formats/{formatName}', {
      params: { path: { formatName: 'to-replace' } },
      body: { base: 'csv', csv: { booleanFormat: 'oneZero' } },
    });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ name: 'to-replace', description: null, csv: { ...CSV_DEFAULTS, booleanFormat: 'oneZero' } });
    expect(data!.createdAt).toBe(created.data!.createdAt);
    const mismo = await lender.client.PUT('/v1/export-formats/{formatName}', { params: { path: { formatName: 'to-replace' } }, body: { base: 'mismo' } });
    expect(mismo.data).toMatchObject({ base: 'mismo', csv: null });
    const read = await lender.client.GET('/v1/export-formats/{formatName}', { params: { path: { formatName: 'to-replace' } } });
    expect(read.data).toEqual(mismo.data);
  });

  it('is 404 for a format the account does not have, 403 for a member key, 422 for ambiguous numbers', async () => {
    const missing = await lender.client.PUT('/v1/export-formats/{formatName}', { params: { path: { formatName: 'not-there' } }, body: { base: 'mismo' } });
    expect(missing.response.status).toBe(404);
    await lender.client.POST('/v1/export-formats', { body: { name: 'guarded', base: 'mismo' } });
    const member = await lender.member.PUT('/v1/export-formats/{formatName}', { params: { path: { formatName: 'guarded' } }, body: { base: 'csv' } });
    expect(member.response.status).toBe(403);
    const ambiguous = await lender.client.PUT('/v1/export-formats/{formatName}', {
      params: { path: { formatName: 'guarded' } },
      body: { base: 'csv', csv: { decimalSeparator: '.', thousandsSeparator: '.' } },
    });
    expect(ambiguous.response.status).toBe(422);
  });

  it('refuses a body that is not JSON (415) or of the wrong shape (400)', async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'shape-checked', base: 'mismo' } });
    const text = await app.fetch('/v1/export-formats/shape-checked', {
      method: 'PUT',
      headers: { Authorization: `Bearer ${lender.apiKey}`, 'Content-Type': 'text/plain' },
      body: 'base=csv',
    });
    expect(text.status).toBe(415);
    const renamed = await app.fetch('/v1/export-formats/shape-checked', {
      method: 'PUT',
      headers: { Authorization: `Bearer ${lender.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'new-name', base: 'csv' }),
    });
    expect(renamed.status).toBe(400);
    const huge = await app.fetch('/v1/export-formats/shape-checked', {
      method: 'PUT',
      headers: { Authorization: `Bearer ${lender.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ base: 'csv', description: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
  });
});

describe('deleteExportFormat', () => {
  it('deletes the format (204); the export then refuses its name as unknown', async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'short-lived', base: 'csv' } });
    const before = await app.fetch('/v1/mortgages/export?format=short-lived', { headers: { Authorization: `Bearer ${lender.apiKey}` } });
    expect(before.status).toBe(200);
    await before.arrayBuffer();
    const { response } = await lender.client.DELETE('/v1/export-formats/{formatName}', { params: { path: { formatName: 'short-lived' } } });
    expect(response.status).toBe(204);
    const after = await app.fetch('/v1/mortgages/export?format=short-lived', { headers: { Authorization: `Bearer ${lender.apiKey}` } });
    expect(after.status).toBe(400);
    expect(await after.json()).toMatchObject({ code: 'unknown_format' });
    const again = await lender.client.DELETE('/v1/export-formats/{formatName}', { params: { path: { formatName: 'short-lived' } } });
    expect(again.response.status).toBe(404);
  });

  it("a member key may not delete (403), and another account's format is 404", async () => {
    await lender.client.POST('/v1/export-formats', { body: { name: 'kept', base: 'csv' } });
    const member = await lender.member.DELETE('/v1/export-formats/{formatName}', { params: { path: { formatName: 'kept' } } });
    expect(member.response.status).toBe(403);
    const other = await app.newAccount('Other Lender');
    const theirs = await other.client.DELETE('/v1/export-formats/{formatName}', { params: { path: { formatName: 'kept' } } });
    expect(theirs.response.status).toBe(404);
    const still = await lender.client.GET('/v1/export-formats/{formatName}', { params: { path: { formatName: 'kept' } } });
    expect(still.response.status).toBe(200);
  });
});

describe('rate limits on export operations', () => {
  it('answers 429 with Retry-After once a key has used its requests for the minute', async () => {
    // Held still: on PostgreSQL the windows are the clock's minutes, and crossing one mid-test would reset the count.
    const limited = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' }, clock: manualClock() });
    try {
      const account = await limited.newAccount('Busy Lender');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await limited.fetch('/v1/mortgages/export?format=csv', { headers: { Authorization: `Bearer ${account.apiKey}` } });
        await response.arrayBuffer();
        statuses.push(response.status);
        if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect(statuses).toEqual([200, 200, 429]);
      const formats = await account.client.GET('/v1/export-formats');
      expect(formats.response.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
