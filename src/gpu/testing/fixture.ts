// A test fixture's bytes in either GPU project: read from disk under Node (gpu-node), fetched
// from the Vite server that serves the source tree in Chromium (gpu-browser).

/** The bytes of the file at `url` (a `new URL(path, import.meta.url)` of the test). */
export async function fixtureBytes(url: URL): Promise<Uint8Array<ArrayBuffer>> {
  if (url.protocol === 'file:') {
    // A module name Vite leaves alone, so the browser bundle never asks for node:fs.
    const fs = 'node:fs/promises';
    const { readFile } = (await import(/* @vite-ignore */ fs)) as typeof import('node:fs/promises');
    return new Uint8Array(await readFile(url));
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`fixture ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}
