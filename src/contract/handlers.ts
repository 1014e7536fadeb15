/**
 * The types every operation handler is written against, derived from generated/api.d.ts, so a
 * change in the contract breaks the handler at compile time.
 */
import type { Readable } from 'node:stream';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import type { ApiKeyPrincipal } from './principals.ts';
import type { MultipartUpload } from './uploads.ts';

export type OperationId = keyof operations;
type Op<K extends OperationId> = operations[K];

type Defined<T> = [Exclude<T, undefined>] extends [never] ? Record<string, never> : Exclude<T, undefined>;
type ParametersOf<K extends OperationId> = Op<K> extends { parameters: infer P } ? P : never;

type PathParams<K extends OperationId> = Defined<ParametersOf<K> extends { path?: infer T } ? T : undefined>;
type QueryParams<K extends OperationId> = Defined<ParametersOf<K> extends { query?: infer T } ? T : undefined>;

type RequestBodyContent<K extends OperationId> = Op<K> extends { requestBody?: infer B }
  ? Exclude<B, undefined> extends { content: infer C }
    ? C
    : never
  : never;
type JsonRequestBody<K extends OperationId> = RequestBodyContent<K> extends { 'application/json': infer J } ? J : undefined;

/** The input of a handler: everything already validated against the contract (query and path coerced). */
interface OperationInput<K extends OperationId> {
  path: PathParams<K>;
  query: QueryParams<K>;
  body: JsonRequestBody<K>;
  /** Lower-cased request headers. */
  headers: Record<string, string | string[] | undefined>;
}

type Responses<K extends OperationId> = Op<K> extends { responses: infer R } ? R : never;
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204>;
type JsonContentOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;

/** A JSON response the contract declares for this operation. */
type JsonResult<K extends OperationId> = {
  [S in SuccessStatus<K>]: { status: S; body: JsonContentOf<Responses<K>[S]>; headers?: Record<string, string> };
}[SuccessStatus<K>];

/** A non-JSON response (CSV, a document's bytes, a stream): the handler names its content type. */
export interface RawResult {
  status: number;
  raw: string | Buffer | Readable;
  contentType: string;
  headers?: Record<string, string>;
}

/**
 * What a handler is given besides its input: the app's context (with this request's logger), so it
 * passes itself to use cases as their context, plus who is calling and what only the transport
 * knows. The edge provides it; a handler never sees the HTTP framework.
 */
export interface RequestContext extends AppContext {
  requestId: string;
  /** The authenticated API key. Present on every operation secured by `apiKey`. */
  principal: ApiKeyPrincipal;
  /** What each security handler returned, by scheme name (e.g. `bankToken`). */
  security: Record<string, unknown>;
  /** Aborted when the client goes away before the response has finished (a streamed export stops reading). */
  readonly signal: AbortSignal;
  /** The API version the request is answered in (its `Mos-Version`, else the account's pinned one): for what the edge does not render itself, a streamed export. */
  readonly apiVersion: string;
  /** The parsed multipart/form-data body, its files already on disk; undefined for any other body. */
  readonly upload: MultipartUpload | undefined;
}

type OperationHandler<K extends OperationId> = (
  input: OperationInput<K>,
  ctx: RequestContext,
) => Promise<JsonResult<K> | RawResult>;

export type OperationHandlers = { [K in OperationId]?: OperationHandler<K> };
