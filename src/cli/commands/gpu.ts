// `lwm gpu [--json] [--no-selftest]`: the WebGPU adapter Node sees (through Dawn) and the
// kernel self-test, the same checks the System view runs in the browser.
import { parseCommandArgs, type Command } from '../io.ts';
import { openNodeRuntime } from './common.ts';

const gpu: Command = async (argv, io) => {
  const { values } = parseCommandArgs(argv, { json: { type: 'boolean' }, 'no-selftest': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, false);
  if (values.help) {
    io.out('Usage: lwm gpu [--json] [--no-selftest]\nShows the WebGPU adapter (Dawn in Node) and runs the kernel self-test.\n');
    return 0;
  }
  const { runSelfTest } = await import('../../gpu/selftest.ts');
  const rt = await openNodeRuntime(io, 'lwm gpu: ');
  if (!rt) return 1;
  try {
    const results = values['no-selftest']
      ? []
      : await runSelfTest(rt, (r) => {
          if (!values.json) io.out(`  ${r.pass ? 'pass' : 'FAIL'}  ${r.name}: ${r.detail} (${r.ms.toFixed(0)} ms)\n`);
        });
    if (values.json) {
      io.out(JSON.stringify({ adapter: rt.report, selfTest: results }) + '\n');
    } else {
      io.out(`adapter: ${rt.describe()}\n`);
      const f = rt.report.features;
      io.out(
        `features: shader-f16 ${f.shaderF16 ? 'yes' : 'no'}, subgroups ${f.subgroups ? 'yes' : 'no'}, timestamp-query ${f.timestampQuery ? 'yes' : 'no'}\n`,
      );
      if (results.length) io.out(`self-test: ${results.filter((r) => r.pass).length} of ${results.length} checks passed\n`);
    }
    return results.every((r) => r.pass) ? 0 : 1;
  } finally {
    rt.dispose();
  }
};

export default gpu;
