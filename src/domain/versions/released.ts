/**
 * The released versions, oldest first: each has its frozen bundle in openapi/versions/<date>.json.
 * Written by `npm run version:release <date>` (scripts/version-release.ts); a test holds this list
 * and the folder together.
 */
export const RELEASED_VERSIONS: readonly string[] = ['2026-11-21', '2026-12-07', '2026-12-08'];
