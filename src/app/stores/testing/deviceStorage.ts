// This device's localStorage for the store tests: a Map behind the page's localStorage API. It
// outlives a reload (vi.resetModules), as the device's storage does; the modules' memory does not.

/** Installs a Map-backed localStorage on globalThis and returns the Map (what the device holds). */
export function deviceStorage(): Map<string, string> {
  const device = new Map<string, string>();
  Object.defineProperty(globalThis, 'localStorage', {
    configurable: true,
    value: {
      getItem: (k: string) => device.get(k) ?? null,
      setItem: (k: string, v: string) => void device.set(k, String(v)),
      removeItem: (k: string) => void device.delete(k),
      clear: () => device.clear(),
      key: (i: number) => [...device.keys()][i] ?? null,
      get length() {
        return device.size;
      },
    },
  });
  return device;
}
