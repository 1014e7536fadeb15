/**
 * Reads a request body the way the matched operation declares it: the media types it accepts,
 * the size limit, and a nesting limit. Runs after authentication, so an anonymous caller cannot
 * make the service read a large body.
 */
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import { StringDecoder } from 'node:string_decoder';
import bourne from '@hapi/bourne';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { problems } from './problem.ts';

/** Deeper JSON than this is refused: no schema here nests more than a few levels. */
export const MAX_JSON_DEPTH = 32;

/** A parser for one media type; it sets `ctx.request.body` (and `ctx.request.files` for multipart). */
export type BodyParser = Middleware;

export interface BodyParsers {
  [mediaType: string]: BodyParser;
}

/** The methods whose body is read: bufferedJson's and koa-body's (its parsedMethods below) alike. */
const BODY_METHODS = [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE];
const PARSED_METHODS = new Set<string>(BODY_METHODS);
/** Content types koa-body certainly takes as JSON (type-is matches them); any other goes through koa-body. */
const PLAIN_JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);
/** co-body's strict check: a JSON text that is an object or an array. */
const STRICT_JSON = /^[\x20\x09\x0a\x0d]*(\[|\{)/;
/** What bufferedJson answers when it leaves the body to koa-body. */
export const NOT_HERE = Symbol('not read here');

/**
 * The JSON body of an ordinary request (a declared length within the limit, no content encoding,
 * a plain JSON content type), read and parsed as koa-body would: the whole body, or 400
 * `request.aborted` when the client goes away first (raw-body's error), or the stream's own error;
 * then co-body's parse: UTF-8 with a leading BOM dropped, an empty text is {}, only an object or
 * an array, @hapi/bourne refusing __proto__ keys, a SyntaxError with status 400 otherwise.
 * NOT_HERE for every other request (a limit to enforce, an encoding, chunks, an unusual content
 * type), which koa-body reads as before. koa-body's machinery around the read (type-is, co-body,
 * inflation, raw-body, iconv-lite) was 6 % of a quote's CPU (issue 17's profile).
 */
export function bufferedJson(ctx: Context, limitBytes: number): typeof NOT_HERE | Promise<unknown> {
  const req = ctx.req;
  const headers = req.headers;
  if (!PARSED_METHODS.has(req.method ?? '')) return NOT_HERE;
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return NOT_HERE;
  const declared = headers['content-length'];
  if (declared === undefined || !/^[0-9]{1,9}$/.test(declared)) return NOT_HERE;
  const length = Number(declared);
  if (length === 0 || length > limitBytes) return NOT_HERE;
  if (!PLAIN_JSON_TYPES.has((headers['content-type'] ?? '').trim().toLowerCase())) return NOT_HERE;
  if (req.readableFlowing === true || req.readableEncoding !== null || !req.readable) return NOT_HERE;
  return readWhole(req, length).then(parseJson);
}

function readWhole(req: IncomingMessage, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onEnd);
      req.off('aborted', onAborted);
      req.off('close', cleanup);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    };
    function onEnd(err?: Error) {
      cleanup();
      if (err) return reject(err);
      if (received !== length) {
        return reject(Object.assign(new Error('request size did not match content length'), { status: 400, statusCode: 400, expose: true, type: 'request.size.invalid' }));
      }
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    }
    function onAborted() {
      cleanup();
      reject(Object.assign(new Error('request aborted'), { status: 400, statusCode: 400, expose: true, code: 'ECONNABORTED', type: 'request.aborted' }));
    }
    req.on('aborted', onAborted);
    req.on('close', cleanup);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onEnd);
  });
}

function parseJson(bytes: Buffer): unknown {
  const decoder = new StringDecoder('utf8');
  let text = decoder.write(bytes) + decoder.end();
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    if (!text) return {};
    if (!STRICT_JSON.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
    return bourne.parse(text, { protoAction: 'error' });
  } catch (err) {
    throw Object.assign(err as Error, { status: 400, body: text });
  }
}

export function jsonBodyParser(limitBytes: number): BodyParser {
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    patchNode: false,
    parsedMethods: BODY_METHODS,
    onError: (err) => {
      throw err;
    },
  });
  return async (ctx, next) => {
    const read = bufferedJson(ctx, limitBytes);
    if (read !== NOT_HERE) {
      ctx.request.body = (await read) as typeof ctx.request.body;
      return next();
    }
    try {
      await parse(ctx, next);
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') {
        throw problems.payloadTooLarge(`The JSON body is larger than the limit of ${limitBytes} bytes.`);
      }
      throw err;
    }
  };
}

function hasRequestBody(ctx: Context): boolean {
  const length = ctx.get('Content-Length');
  if (length !== '') return Number(length) > 0;
  return ctx.get('Transfer-Encoding') !== '';
}

/** True when `value` nests deeper than `max` levels (iterative: a deep body cannot overflow the stack). */
export function depthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * Parses the body for an operation whose requestBody declares `declaredTypes` (empty when it
 * declares none) and returns it; undefined when the request has no body.
 */
export async function readOperationBody(ctx: Context, declaredTypes: string[], parsers: BodyParsers): Promise<unknown> {
  if (!hasRequestBody(ctx)) return undefined;
  const mediaType = (ctx.request.type || '').toLowerCase();

  if (declaredTypes.length === 0) {
    // Some clients send `{}` with every POST; anything more means the caller expects an effect it won't get.
    const parser = parsers['application/json'];
    if (mediaType === 'application/json' && parser) {
      await parser(ctx, async () => {});
      const body = ctx.request.body;
      if (body && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return undefined;
    }
    throw problems.badRequest('body_not_allowed', `${ctx.method} ${ctx.path} takes no request body.`);
  }

  if (!declaredTypes.includes(mediaType)) {
    throw problems.unsupportedMediaType(
      `Send the body as ${declaredTypes.join(' or ')}${mediaType ? `, not ${mediaType}` : ' with a Content-Type header'}.`,
    );
  }
  const parser = parsers[mediaType];
  if (!parser) throw problems.unsupportedMediaType(`Bodies of type ${mediaType} are not accepted here.`);
  await parser(ctx, async () => {});
  const body = ctx.request.body;
  if (mediaType === 'application/json' && depthExceeds(body, MAX_JSON_DEPTH)) {
    throw problems.badRequest('body_too_deep', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  return body;
}
