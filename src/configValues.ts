/**
 * How src/config.ts reads a value: the environment's shape and the bounded integer reader, kept
 * apart so the settings themselves (and their comments, which docs/ renders) stay in one file.
 */
export type Env = Record<string, string | undefined>;

/** Reads an integer setting within bounds, collecting a readable problem instead of throwing. */
export function integer(env: Env, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return fallback;
  }
  const value = Number(raw.trim());
  if (value < min || value > max) problems.push(`${name} must be from ${min} to ${max}, got ${value}`);
  return value;
}
