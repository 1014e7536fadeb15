/**
 * The client: openapi-fetch over the contract's types, with the API key sent on every call, an
 * `Idempotency-Key` on every POST, retries (see retry.ts), problems thrown as ProblemError,
 * every list as an async iterator over its cursor pages, and the export as a stream.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/api.ts';
import { problemErrorOf } from './errors.ts';
import { resilientFetch, type RetryOptions } from './retry.ts';
import { API_VERSION } from './version.ts';

export type Schemas = components['schemas'];

export interface MortgageClientOptions extends RetryOptions {
  /** The service (`https://…`), `http://127.0.0.1:3000` locally, or the mock `http://127.0.0.1:4010`. */
  baseUrl: string;
  /** An API key, `mos_live_…` or `mos_test_…` (the mock takes any); for `POST /v1/banks/verify`, a bank token. */
  apiKey: string;
  /**
   * The API version to be answered in (sent as `Mos-Version` on every request); default
   * API_VERSION, the version these types describe. Without it, requests would follow the version
   * the account is pinned to, which an admin may upgrade.
   */
  apiVersion?: string;
  /** Another fetch (a proxy agent, a test double). */
  fetch?: (input: Request) => Promise<Response>;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

type ListResponse = { data: unknown[]; nextCursor: string | null };
type GetOperation<P extends keyof paths> = paths[P] extends { get: infer G } ? G : never;

/** Paths whose GET answers a cursor page: `{ data: [...], nextCursor }`. */
export type ListPath = {
  [P in keyof paths]: GetOperation<P> extends { responses: { 200: { content: { 'application/json': ListResponse } } } } ? P : never;
}[keyof paths];

type ListPage<P extends ListPath> = GetOperation<P> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
/** One item of a list. */
export type ListItem<P extends ListPath> = ListPage<P> extends { data: Array<infer T> } ? T : never;

type Parameters_<P extends ListPath> = GetOperation<P> extends { parameters: infer Q } ? Q : never;
type QueryOf<P extends ListPath> = Parameters_<P> extends { query?: infer Q } ? Omit<NonNullable<Q>, 'cursor'> : never;
type PathParamsOf<P extends ListPath> = Parameters_<P> extends { path: infer A } ? A : never;

/** What a list call takes: its path parameters (when it has some) and its query, without `cursor`. */
export type ListInit<P extends ListPath> = ([PathParamsOf<P>] extends [never] ? { path?: never } : { path: PathParamsOf<P> }) & { query?: QueryOf<P> };

export type ExportQuery = NonNullable<NonNullable<paths['/v1/mortgages/export']['get']['parameters']['query']>>;
export type ExportRecord = Schemas['ExportRecord'];

export interface ExportDownload {
  /** `application/json`, `application/x-ndjson`, `text/csv` or `application/xml`, as the format is. */
  contentType: string;
  /** The file name the service suggests (`mortgages-2026-11-21.csv`). */
  filename: string | undefined;
  /** The body as it streams in; read it once. */
  body: ReadableStream<Uint8Array>;
}

export interface MortgageClient {
  /**
   * Every operation, typed from the contract (openapi-fetch): `api.POST('/v1/quotes', { body })`.
   * A success answers `{ data, response }`; a problem is thrown as ProblemError.
   */
  api: Client<paths>;
  /** Every item of a list, page after page (`limit` sets the page size). */
  list<P extends ListPath>(path: P, init?: ListInit<P>): AsyncGenerator<ListItem<P>, void, undefined>;
  /** Starts an export and returns its body as a stream (`format`: json, ndjson, csv or a custom format's name). */
  exportMortgages(query?: ExportQuery): Promise<ExportDownload>;
  /** The export's records one by one, streamed as NDJSON: memory stays flat however many there are. */
  exportRecords(query?: Omit<ExportQuery, 'format'>): AsyncGenerator<ExportRecord, void, undefined>;
}

export function createMortgageClient(options: MortgageClientOptions): MortgageClient {
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}`, 'Mos-Version': options.apiVersion ?? API_VERSION },
    fetch: resilientFetch(options.fetch ?? ((request) => globalThis.fetch(request)), options),
  });
  api.use({
    async onResponse({ response }) {
      if (!response.ok) throw await problemErrorOf(response);
      return undefined;
    },
  });

  async function* list<P extends ListPath>(path: P, init?: ListInit<P>): AsyncGenerator<ListItem<P>, void, undefined> {
    let cursor: string | undefined;
    const get = api.GET as unknown as (path: string, init: object) => Promise<{ data?: ListResponse }>;
    do {
      const { data } = await get(path, { params: { path: init?.path, query: { ...init?.query, ...(cursor ? { cursor } : {}) } } });
      for (const item of data!.data) yield item as ListItem<P>;
      cursor = data!.nextCursor ?? undefined;
    } while (cursor);
  }

  async function exportMortgages(query: ExportQuery = {}): Promise<ExportDownload> {
    const { data, response } = await api.GET('/v1/mortgages/export', { params: { query }, parseAs: 'stream' });
    const disposition = response.headers.get('content-disposition') ?? '';
    return {
      contentType: (response.headers.get('content-type') ?? '').split(';')[0]!.trim(),
      filename: /filename="([^"]+)"/.exec(disposition)?.[1],
      // openapi-fetch gives no data for a `Content-Length: 0` answer: an NDJSON export of no records.
      body: (data as ReadableStream<Uint8Array> | undefined) ?? response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() }),
    };
  }

  async function* exportRecords(query: Omit<ExportQuery, 'format'> = {}): AsyncGenerator<ExportRecord, void, undefined> {
    const { body } = await exportMortgages({ ...query, format: 'ndjson' });
    const decoder = new TextDecoder();
    let buffered = '';
    const reader = body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line) yield JSON.parse(line) as ExportRecord;
        }
        if (done) break;
      }
      if (buffered.trim()) throw new Error('The export ended in the middle of a record: it was cut short; retry it.');
    } finally {
      await reader.cancel().catch(() => {});
    }
  }

  return { api, list, exportMortgages, exportRecords };
}
