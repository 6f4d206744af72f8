import { describe, expect, it } from 'vitest';
import { main } from './main.ts';
import { captureIO } from './testing.ts';


describe('lwm main', () => {
  it('prints usage and exits 2 with no command', async () => {
    const io = captureIO();
    expect(await main([], io)).toBe(2);
    expect(io.stdout).toContain('lwm validate');
  });
  it('rejects an unknown command with exit 2', async () => {
    const io = captureIO();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.stderr).toContain("unknown command 'frobnicate'");
  });
});
