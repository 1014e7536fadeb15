/** The API version this SDK's types describe and sends by default (written by `npm run version:release`). */
export const API_VERSION = '2026-12-08';
