// Web Locks held in this origin: a run training or a benchmark running in another tab holds one
// (src/jobs/protocol.ts names them), so a store can tell a live job from one left by a closed tab.

/** Names of Web Locks held anywhere in this origin; empty where the browser has no Web Locks. */
export async function heldLocks(): Promise<Set<string>> {
  try {
    const q = await navigator.locks?.query();
    return new Set((q?.held ?? []).map((l) => l.name ?? ''));
  } catch {
    return new Set();
  }
}
