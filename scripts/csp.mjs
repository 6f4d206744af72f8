// The Content-Security-Policy of the built site: one definition for the <meta> tag the build
// writes into index.html (vite.config.ts) and the header scripts/serve-dist.mjs sends.
//
// connect-src: the page's own origin, local servers on any port (vLLM, llama.cpp, Ollama on this
// machine: http://localhost:*, http://127.0.0.1:*; CSP has no syntax for IPv6 literals), plus the origins listed at
// build time in LWM_CSP_CONNECT (space-separated), e.g.
//   LWM_CSP_CONNECT="https://api.example.com https://judge.lab.internal:8443" npm run build
// A <meta> policy is fixed when the page loads, so a host adds its endpoints when it builds.
//
// The Hugging Face Hub ("From the Hub" in the app, src/app/lib/hubEndpoint.ts): by default
// https://huggingface.co and the hosts it redirects downloads to, named by wildcard as the Hub's
// own firewall guide does (models-downloading, "Downloading behind a proxy or firewall"; the list
// changes, https://huggingface.co/.well-known/meta.json has it): *.huggingface.co (cdn-lfs,
// cdn-lfs-us-1) and *.hf.co (cdn-lfs.hf.co, cdn-lfs-us-1.hf.co, cdn-lfs-eu-1.hf.co, and the Xet
// hosts cas-bridge.xethub.hf.co, cas-server.xethub.hf.co). VITE_HF_ENDPOINT set at build time (a
// mirror, e.g. https://hf-mirror.com) replaces all of them with its origin, in the policy and in
// the app alike; a mirror whose files come from other hosts lists those in LWM_CSP_CONNECT.
// No 'unsafe-eval': the schema validators are compiled ahead of time (scripts/gen-validators.ts).
// 'wasm-unsafe-eval' only lets WebAssembly compile; it does not allow eval() or new Function().

export const LOCAL_ENDPOINTS = ['http://localhost:*', 'http://127.0.0.1:*'];

/** Origins a host may add: scheme://host[:port] (port may be *), or a *.domain wildcard host. */
const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[a-z0-9.-]+(:(\d{1,5}|\*))?$/i;

export const HUB_HOSTS = ['https://huggingface.co', 'https://*.huggingface.co', 'https://*.hf.co'];

/** The Hub's origins the page may reach: VITE_HF_ENDPOINT's origin when set, else HUB_HOSTS. */
export function hubConnectSources(value = process.env.VITE_HF_ENDPOINT ?? '') {
  const v = value.trim();
  if (!v) return HUB_HOSTS;
  let url;
  try {
    url = new URL(v);
  } catch {
    throw new Error(`VITE_HF_ENDPOINT: ${JSON.stringify(v)} is not a URL such as https://hf-mirror.com`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.search || url.hash)
    throw new Error(`VITE_HF_ENDPOINT: ${JSON.stringify(v)} must be an http or https URL without credentials, query or fragment`);
  return [url.origin];
}

export function extraConnectSources(value = process.env.LWM_CSP_CONNECT ?? '') {
  const list = value.split(/\s+/).filter(Boolean);
  for (const o of list) {
    if (!ORIGIN.test(o)) throw new Error(`LWM_CSP_CONNECT: ${JSON.stringify(o)} is not an origin such as https://api.example.com or http://10.0.0.5:8000`);
  }
  return list;
}

export function contentSecurityPolicy(extra = extraConnectSources(), hub = hubConnectSources()) {
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self'",
    // React style attributes and Monaco's injected <style> elements.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self' ${[...LOCAL_ENDPOINTS, ...hub, ...extra].join(' ')}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
  ].join('; ');
}
