// Where the app's "From the Hub" field downloads from: https://huggingface.co, or the mirror
// VITE_HF_ENDPOINT names at build time (scripts/csp.mjs lets the page reach the same origin and no
// other Hub host then). For the end-to-end tests only, a page whose localStorage holds
// `lwm.test.hubEndpoint` = `http://127.0.0.1:PORT` (or `http://localhost:PORT`) uses that mock Hub
// instead: a loopback address alone, which the policy already allows (local endpoints), so the
// key cannot send a download or a token anywhere the built policy does not.
export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';
export const TEST_HUB_ENDPOINT_KEY = 'lwm.test.hubEndpoint';

const LOOPBACK = /^http:\/\/(127\.0\.0\.1|localhost):\d{1,5}$/;

export function hubEndpoint(
  built: string | undefined = import.meta.env.VITE_HF_ENDPOINT as string | undefined,
  storage: Pick<Storage, 'getItem'> | null = pageStorage(),
): string {
  const test = storage?.getItem(TEST_HUB_ENDPOINT_KEY);
  if (test && LOOPBACK.test(test)) return test;
  return (built ?? '').trim().replace(/\/+$/, '') || DEFAULT_HUB_ENDPOINT;
}

function pageStorage(): Pick<Storage, 'getItem'> | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}
