// The Content-Security-Policy of the built site: one definition for the <meta> tag the build
// writes into index.html (vite.config.ts) and the header scripts/serve-dist.mjs sends.
//
// connect-src: the page's own origin, local servers on any port (vLLM, llama.cpp, Ollama on this
// machine: http://localhost:*, http://127.0.0.1:*; CSP has no syntax for IPv6 literals), plus the origins listed at
// build time in LWM_CSP_CONNECT (space-separated), e.g.
//   LWM_CSP_CONNECT="https://api.example.com https://judge.lab.internal:8443" npm run build
// A <meta> policy is fixed when the page loads, so a host adds its endpoints when it builds.
// No 'unsafe-eval': the schema validators are compiled ahead of time (scripts/gen-validators.ts).
// 'wasm-unsafe-eval' only lets WebAssembly compile; it does not allow eval() or new Function().

export const LOCAL_ENDPOINTS = ['http://localhost:*', 'http://127.0.0.1:*'];

/** Origins a host may add: scheme://host[:port] (port may be *), or a *.domain wildcard host. */
const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[a-z0-9.-]+(:(\d{1,5}|\*))?$/i;

export function extraConnectSources(value = process.env.LWM_CSP_CONNECT ?? '') {
  const list = value.split(/\s+/).filter(Boolean);
  for (const o of list) {
    if (!ORIGIN.test(o)) throw new Error(`LWM_CSP_CONNECT: ${JSON.stringify(o)} is not an origin such as https://api.example.com or http://10.0.0.5:8000`);
  }
  return list;
}

export function contentSecurityPolicy(extra = extraConnectSources()) {
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self'",
    // React style attributes and Monaco's injected <style> elements.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self' ${[...LOCAL_ENDPOINTS, ...extra].join(' ')}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
  ].join('; ');
}
