// Cache Storage kept in memory for tests in Node (src/hub/browser.test.ts, the app's Hub store test).
/** Cache Storage in memory, as much of it as the Hub's cache uses (open, keys, match, put, delete). */
export class MemoryCache {
  readonly entries = new Map<string, Blob>();
  async keys() {
    return [...this.entries.keys()].map((url) => new Request(url));
  }
  async match(req: RequestInfo) {
    const b = this.entries.get(typeof req === 'string' ? req : req.url);
    return b ? new Response(b) : undefined;
  }
  async put(req: RequestInfo, res: Response) {
    this.entries.set(typeof req === 'string' ? req : req.url, await res.blob());
  }
  async delete(req: RequestInfo) {
    return this.entries.delete(typeof req === 'string' ? req : req.url);
  }
}

export class MemoryCaches {
  readonly caches = new Map<string, MemoryCache>();
  async open(name: string) {
    if (!this.caches.has(name)) this.caches.set(name, new MemoryCache());
    return this.caches.get(name)!;
  }
  async keys() {
    return [...this.caches.keys()];
  }
  async has(name: string) {
    return this.caches.has(name);
  }
  async delete(name: string) {
    return this.caches.delete(name);
  }
}
