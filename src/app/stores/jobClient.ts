// The page's one jobs worker (src/jobs/worker.ts), started on first use. It owns the GPU
// device: the Train view's runs and the System view's adapter report, memory and self-test all
// go through this client, so the page never holds a device of its own.
import { JobClient } from '../../jobs/client.ts';

let client: JobClient | null = null;

export function jobClient(): JobClient {
  return (client ??= JobClient.spawn());
}
