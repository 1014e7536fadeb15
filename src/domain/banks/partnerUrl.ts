/**
 * Which base URLs an `http` bank partner may have: the webhooks' SSRF rules
 * (src/domain/webhooks/addressPolicy.ts), with the partners' own allow-list
 * (BANK_PARTNER_ALLOWED_HOSTS). `https` to a public host; only allow-listed hosts may use plain
 * `http` or a non-public address (tests and local development use one). A base URL carries no
 * query, fragment or credentials: the service appends the partner API's paths to it.
 */
import { normaliseHost, urlDecision } from '../webhooks/addressPolicy.ts';

export type PartnerUrlVerdict =
  | { ok: true; url: string; host: string; allowListed: boolean; needsResolution: boolean }
  | { ok: false; reason: string };

export function partnerBaseUrlDecision(raw: string, allowedHosts: readonly string[]): PartnerUrlVerdict {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return { ok: false, reason: 'the base URL must be an absolute URL such as https://api.bank.example/verification/' };
  }
  if (parsed.search !== '' || parsed.hash !== '') return { ok: false, reason: 'the base URL must not have a query or a fragment' };
  if (parsed.protocol === 'http:' && !allowedHosts.includes(normaliseHost(parsed.hostname))) {
    return { ok: false, reason: 'the base URL must use https (plain http only for hosts listed in BANK_PARTNER_ALLOWED_HOSTS)' };
  }
  const verdict = urlDecision(raw, allowedHosts);
  if (!verdict.ok) return { ok: false, reason: verdict.reason.replace(/^url /, 'the base URL ') };
  const url = verdict.url.endsWith('/') ? verdict.url : `${verdict.url}/`;
  return { ok: true, url, host: verdict.host, allowListed: verdict.allowListed, needsResolution: verdict.needsResolution };
}
