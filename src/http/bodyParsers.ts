/**
 * Body parsers beyond JSON, keyed by media type, for operations whose requestBody declares them.
 *
 * multipart/form-data (document uploads): koa-body with formidable. Each request's files go to
 * a fresh directory under DATA_DIR/uploads-incoming, removed when the response is finished or
 * the parse fails, so a refused or aborted upload leaves nothing. Limits: one file of at most
 * DOCUMENT_MAX_BYTES (413), a few small fields. The SHA-256 is computed while the bytes stream in.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { AppContext } from '../context.ts';
import { clearIncoming, incomingDir } from '../store/documentFiles.ts';
import type { MultipartUpload } from '../contract/uploads.ts';
import { ApiProblem, problems } from './problem.ts';
import type { BodyParser, BodyParsers } from './requestBody.ts';


const STATE_KEY = 'multipartUpload';

/** The parsed multipart upload of this request, if it had one. */
export function multipartUpload(koa: Context): MultipartUpload | undefined {
  return koa.state[STATE_KEY] as MultipartUpload | undefined;
}

/** Bytes a multipart request may carry beyond the file itself (boundaries, part headers, fields). */
const ENVELOPE_BYTES = 64 * 1024;
const MAX_FIELDS = 8;
const MAX_FIELDS_BYTES = 256 * 1024;
const MAX_FILES = 1;

// formidable's error codes (formidable/src/FormidableError.js).
const FORMIDABLE = {
  maxFieldsSizeExceeded: 1006,
  maxFieldsExceeded: 1007,
  biggerThanTotalMaxFileSize: 1009,
  noEmptyFiles: 1010,
  maxFilesExceeded: 1015,
  biggerThanMaxFileSize: 1016,
} as const;

interface FormidableFile {
  filepath: string;
  size: number;
  hash?: string | null;
  originalFilename?: string | null;
  mimetype?: string | null;
}

function asList<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function parseProblem(err: unknown, maxBytes: number): ApiProblem {
  if (err instanceof ApiProblem) return err;
  const code = (err as { code?: unknown }).code;
  switch (code) {
    case FORMIDABLE.biggerThanMaxFileSize:
    case FORMIDABLE.biggerThanTotalMaxFileSize:
      return problems.payloadTooLarge(`The file is larger than the limit of ${maxBytes} bytes.`);
    case FORMIDABLE.maxFilesExceeded:
      return problems.badRequest('too_many_files', `Send exactly ${MAX_FILES} file part, named "file".`, [
        { pointer: '/file', message: 'must be a single file part' },
      ]);
    case FORMIDABLE.maxFieldsExceeded:
    case FORMIDABLE.maxFieldsSizeExceeded:
      return problems.badRequest('too_many_fields', `The form has more than ${MAX_FIELDS} fields or more than ${MAX_FIELDS_BYTES} bytes of field data.`);
    case FORMIDABLE.noEmptyFiles:
      return problems.badRequest('empty_file', 'The file is empty.', [{ pointer: '/file', message: 'must not be empty' }]);
    default:
      return problems.badRequest('malformed_multipart', 'The multipart/form-data body could not be read.');
  }
}

function multipartBodyParser(ctx: AppContext): BodyParser {
  const maxBytes = ctx.config.documentMaxBytes;
  const root = incomingDir(ctx.config.dataDir);
  clearIncoming(ctx.config.dataDir);
  return async (ctx) => {
    const length = ctx.get('Content-Length');
    // With a declared length, Node stops the body there, so the check below bounds everything read
    // (part headers, preamble and epilogue included). A chunked body could grow without bound.
    if (length === '') {
      throw new ApiProblem(411, 'length_required', 'Content-Length required', 'Send the upload with a Content-Length header; chunked uploads are not accepted.');
    }
    if (Number(length) > maxBytes + ENVELOPE_BYTES) {
      // Refused before a byte is read: no file is ever written.
      throw problems.payloadTooLarge(`The upload is larger than the limit of ${maxBytes} bytes.`);
    }
    await mkdir(root, { recursive: true });
    const dir = await mkdtemp(path.join(root, 'req-'));
    const cleanUp = () => rm(dir, { recursive: true, force: true }).catch(() => {});
    const parse = koaBody({
      json: false,
      urlencoded: false,
      text: false,
      multipart: true,
      patchNode: false,
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH],
      formidable: {
        uploadDir: dir,
        maxFileSize: maxBytes,
        maxTotalFileSize: maxBytes,
        maxFiles: MAX_FILES,
        maxFields: MAX_FIELDS,
        maxFieldsSize: MAX_FIELDS_BYTES,
        allowEmptyFiles: false,
        minFileSize: 1,
        keepExtensions: false,
        hashAlgorithm: 'sha256',
      },
      onError: (err) => {
        throw err;
      },
    });
    try {
      await parse(ctx, async () => {});
    } catch (err) {
      await cleanUp();
      throw parseProblem(err, maxBytes);
    }
    // The handler moves the file it keeps; whatever is left goes when the response is done.
    ctx.res.once('close', () => void cleanUp());

    const rawFields = (ctx.request.body ?? {}) as Record<string, string | string[]>;
    const rawFiles = (ctx.request.files ?? {}) as unknown as Record<string, FormidableFile | FormidableFile[]>;
    // Part names are the client's: the maps built from them have no prototype.
    const upload: MultipartUpload = { fields: Object.create(null), files: Object.create(null) };
    for (const [name, value] of Object.entries(rawFields)) upload.fields[name] = asList(value).map(String);
    for (const [name, value] of Object.entries(rawFiles)) {
      upload.files[name] = asList(value).map((file) => ({
        tempPath: file.filepath,
        size: file.size,
        sha256: typeof file.hash === 'string' ? file.hash : '',
        originalFilename: file.originalFilename || null,
        declaredType: file.mimetype || null,
      }));
    }
    ctx.state[STATE_KEY] = upload;
    // What the contract validates and Idempotency-Key fingerprints: the fields, and each file by its digest.
    const body: Record<string, string | string[]> = Object.create(null);
    for (const [name, values] of Object.entries(upload.fields)) body[name] = values.length === 1 ? values[0]! : values;
    for (const [name, files] of Object.entries(upload.files)) {
      const digests = files.map((file) => `sha256:${file.sha256}`);
      body[name] = digests.length === 1 ? digests[0]! : digests;
    }
    ctx.request.body = body;
  };
}

export function bodyParsers(ctx: AppContext): BodyParsers {
  return {
    // multipart/form-data (issue: applications and documents)
    'multipart/form-data': multipartBodyParser(ctx),
  };
}
