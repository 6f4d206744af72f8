import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, extraConnectSources, hubConnectSources } from '../../scripts/csp.mjs';

describe('the Content-Security-Policy of the build (scripts/csp.mjs)', () => {
  it('allows self, local endpoints and the origins a host lists; never eval', () => {
    const p = contentSecurityPolicy(extraConnectSources('https://api.example.com  http://10.0.0.5:8000'), hubConnectSources(''));
    expect(p).toContain("default-src 'self'");
    expect(p).toContain(
      "connect-src 'self' http://localhost:* http://127.0.0.1:* https://huggingface.co https://*.huggingface.co https://*.hf.co https://api.example.com http://10.0.0.5:8000",
    );
    expect(p).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(p).not.toContain("'unsafe-eval'");
  });
  it('refuses LWM_CSP_CONNECT entries that are not origins (no policy injection)', () => {
    for (const bad of ['https://x.com; script-src *', "'unsafe-eval'", '*', 'https:', 'javascript:alert(1)', 'https://x.com/path']) {
      expect(() => extraConnectSources(bad), bad).toThrow(/not an origin/);
    }
  });
  it('lets the page reach the Hugging Face Hub and its download hosts, or only the mirror VITE_HF_ENDPOINT names', () => {
    expect(hubConnectSources('')).toEqual(['https://huggingface.co', 'https://*.huggingface.co', 'https://*.hf.co']);
    const p = contentSecurityPolicy([], hubConnectSources('https://hf-mirror.example.org/'));
    expect(p).toContain("connect-src 'self' http://localhost:* http://127.0.0.1:* https://hf-mirror.example.org;");
    expect(p).not.toContain('huggingface.co');
    for (const bad of ['hf-mirror.com', 'ftp://x.org', 'https://u:p@x.org', "https://x.org/?a='unsafe-eval'", 'https://x.org; script-src *'])
      expect(() => hubConnectSources(bad), bad).toThrow(/VITE_HF_ENDPOINT/);
  });
});
