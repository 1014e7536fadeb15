/**
 * The `Mos-Version` request header: one date among the supported versions. Anything else (a date
 * that is no version, one before the first, one in the future, not a date, the header twice) is
 * refused with the reason, so the caller can fix it; the edge answers 400 `api_version_invalid`.
 */

export type VersionChoice = { version: string } | { refused: string };

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function isCalendarDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/**
 * The version a request asks for. `header` is the raw header (Node joins repeated headers with
 * ", "), `today` the service's date (YYYY-MM-DD), `versions` the supported ones, oldest first.
 */
export function chooseVersion(header: string | string[], versions: readonly string[], today: string): VersionChoice {
  if (Array.isArray(header) || header.includes(',')) return { refused: 'Send Mos-Version once, with one version.' };
  const value = header.trim();
  if (!isCalendarDate(value)) return { refused: `Mos-Version must be a version date (YYYY-MM-DD); "${value.slice(0, 40)}" is not one.` };
  if (versions.includes(value)) return { version: value };
  if (value < versions[0]!) return { refused: `${value} is before the first version, ${versions[0]}.` };
  if (value > today) return { refused: `${value} is in the future.` };
  return { refused: `${value} is not a version of this API.` };
}
