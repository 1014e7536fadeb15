import type { components } from '../../../generated/api.d.ts';

export type DocumentType = components['schemas']['DocumentType'];
export type SniffedContentType = components['schemas']['Document']['contentType'];

/** The documented values of `documentType`, in the spec's order. */
export const DOCUMENT_TYPES: readonly DocumentType[] = ['income_proof', 'identity', 'bank_statement', 'property_appraisal', 'other'];

export function isDocumentType(value: string): value is DocumentType {
  return (DOCUMENT_TYPES as readonly string[]).includes(value);
}

/** The file extension a download is named with. */
export const EXTENSIONS: Record<SniffedContentType, string> = {
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
};
