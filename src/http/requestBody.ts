/**
 * Reads a request body the way the matched operation declares it: the media types it accepts,
 * the size limit, and a nesting limit. Runs after authentication, so an anonymous caller cannot
 * make the service read a large body.
 */
import type { Context, Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { problems } from './problem.ts';

/** Deeper JSON than this is refused: no schema here nests more than a few levels. */
export const MAX_JSON_DEPTH = 32;

/** A parser for one media type; it sets `ctx.request.body` (and `ctx.request.files` for multipart). */
export type BodyParser = Middleware;

export interface BodyParsers {
  [mediaType: string]: BodyParser;
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
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError: (err) => {
      throw err;
    },
  });
  return async (ctx, next) => {
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

export function hasRequestBody(ctx: Context): boolean {
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
