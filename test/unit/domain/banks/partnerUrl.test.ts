import { describe, expect, it } from 'vitest';
import { partnerBaseUrlDecision } from '../../../../src/domain/banks/partnerUrl.ts';

describe('partnerBaseUrlDecision', () => {
  it.each([
    ['https://api.firstharbor.com/verification', 'https://api.firstharbor.com/verification/'],
    ['https://api.firstharbor.com/verification/', 'https://api.firstharbor.com/verification/'],
    ['https://93.184.215.14/', 'https://93.184.215.14/'],
  ])('allows %s (as %s)', (raw, url) => {
    expect(partnerBaseUrlDecision(raw, [])).toMatchObject({ ok: true, url });
  });

  it.each([
    ['plain http', 'http://api.firstharbor.com/'],
    ['loopback', 'https://127.0.0.1/'],
    ['IPv6 loopback', 'https://[::1]/'],
    ['a private network', 'https://10.1.2.3/'],
    ['link-local (cloud metadata)', 'https://169.254.169.254/'],
    ['an IPv4-mapped private address', 'https://[::ffff:192.168.0.1]/'],
    ['a localhost name', 'https://localhost/'],
    ['an internal name', 'https://bank.internal/'],
    ['credentials in the URL', 'https://user:pw@api.firstharbor.com/'],
    ['a query', 'https://api.firstharbor.com/?x=1'],
    ['another scheme', 'ftp://api.firstharbor.com/'],
    ['no URL at all', 'not a url'],
  ])('refuses %s', (_what, raw) => {
    expect(partnerBaseUrlDecision(raw, [])).toMatchObject({ ok: false });
  });

  it('allows an allow-listed loopback host, even over plain http', () => {
    expect(partnerBaseUrlDecision('http://127.0.0.1:8443/bank', ['127.0.0.1'])).toEqual({
      ok: true,
      url: 'http://127.0.0.1:8443/bank/',
      host: '127.0.0.1',
      allowListed: true,
      needsResolution: false,
    });
  });

  it('a public name still has to be resolved and checked at connect time', () => {
    expect(partnerBaseUrlDecision('https://api.firstharbor.com/', [])).toMatchObject({ ok: true, needsResolution: true, allowListed: false });
  });
});
