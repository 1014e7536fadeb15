/**
 * Body parsers beyond JSON, keyed by media type, for operations whose requestBody declares them.
 */
import type { AppServices } from '../services/appServices.ts';
import type { BodyParsers } from './requestBody.ts';

export function bodyParsers(_services: AppServices): BodyParsers {
  return {
    // multipart/form-data (issue: applications and documents)
  };
}
