/**
 * A cookie-keeping HTTP client for the dashboard's server-rendered pages, for tests that look at
 * statuses, headers and cookies exactly (the browser tests see what a person sees). Redirects are
 * not followed; every form is sent as a browser sends it (urlencoded, with an Origin header).
 */
export interface PageResponse {
  status: number;
  headers: Headers;
  body: string;
  /** The Set-Cookie lines of the response. */
  setCookies: string[];
}

export class DashboardClient {
  readonly baseUrl: string;
  readonly cookies = new Map<string, string>();

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(path: string, init: RequestInit = {}): Promise<PageResponse> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0 && !headers.has('Cookie')) headers.set('Cookie', this.cookieHeader());
    const response = await fetch(this.baseUrl + path, { ...init, headers, redirect: 'manual' });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attributes.some((a) => a.trim().toLowerCase() === 'max-age=0') || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: response.status, headers: response.headers, body: await response.text(), setCookies };
  }

  get(path: string): Promise<PageResponse> {
    return this.request(path);
  }

  /**
   * POSTs a form; `_csrf` is taken from `csrfFrom` (a page's HTML) unless the fields set it. The
   * Origin header is this client's base URL unless `origin` names another (null: none); `referer`
   * adds a Referer header (a browser that sends no Origin still sends that).
   */
  post(path: string, fields: Record<string, string | string[]>, options: { origin?: string | null; referer?: string; csrfFrom?: string } = {}): Promise<PageResponse> {
    const form = new URLSearchParams();
    if (options.csrfFrom !== undefined && !('_csrf' in fields)) form.set('_csrf', csrfTokenOf(options.csrfFrom));
    for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const origin = options.origin === undefined ? this.baseUrl : options.origin;
    if (origin !== null) headers.Origin = origin;
    if (options.referer !== undefined) headers.Referer = options.referer;
    return this.request(path, { method: 'POST', body: form.toString(), headers });
  }

  /** Loads a page and posts its form with the page's CSRF token. */
  async submit(pagePath: string, action: string, fields: Record<string, string | string[]>): Promise<PageResponse> {
    const page = await this.get(pagePath);
    return this.post(action, fields, { csrfFrom: page.body });
  }
}

export function csrfTokenOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error('the page has no CSRF token');
  return m[1]!;
}

/** Signs up a new account through the dashboard; returns the client (signed in) and the first key. */
export async function signUpWith(baseUrl: string, details: { name: string; email: string; password: string }): Promise<{ client: DashboardClient; firstKey: string; page: PageResponse }> {
  const client = new DashboardClient(baseUrl);
  const page = await client.submit('/dashboard/sign-up', '/dashboard/sign-up', { '/name': details.name, '/email': details.email, '/password': details.password });
  if (page.status !== 200) throw new Error(`sign-up answered ${page.status}: ${page.body.slice(0, 500)}`);
  const firstKey = /id="new-key">([^<]+)</.exec(page.body)?.[1];
  if (!firstKey) throw new Error('the overview after sign-up shows no key');
  return { client, firstKey, page };
}
