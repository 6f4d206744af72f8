// The import boundaries of src/ (docs/architecture.md draws them): dependencies point one way,
//
//   app, cli  →  jobs  →  train  →  backends, storage  →  model  →  gpu  →  reference (per-op twins)  →  core
//                                   backends  →  hub (Hugging Face Hub ids → the Hugging Face cache)  →  core
//         cli  →  serve (the HTTP server)  →  backends
//   the package (src/index.ts, node.ts, browser.ts, lib/)  →  backends, envs, core
//                    envs (the simulated environments) beside, above core
//
// Every room may import core, which imports nothing of ours but core: the plain data all share
// (the model's config and parameter layout in core/model/, the run spec, the stored records) lives
// there, so no rule needs an exception. `npm test` runs this check as its own step
// (scripts/test.mjs); src/boundaries.test.ts shows each rule catching a wrong import in a fixture
// tree. Type-only imports count: a type is a door too.
//
// Tests (*.test.ts) wire layers together on purpose (a backend test trains a model first), so
// the layer rules look at production modules only; the rules about app and cli hold for all.

/** A folder of src/, as a path pattern. */
const src = (folder) => `^src/${folder}/`;
const TESTS = '\\.test\\.tsx?$';

/**
 * `name`: modules of FOLDER import only FOLDER and the ALLOWED folders of src/ (npm packages are
 * not matched). An allowed entry ending in `$` names files rather than a folder.
 */
function onlyImports(name, folder, allowed, comment) {
  const doors = [folder, ...allowed].map((a) => (a.endsWith('$') ? a : `${a}/`));
  return {
    name,
    comment,
    severity: 'error',
    from: { path: src(folder), pathNot: TESTS },
    to: { path: '^src/', pathNot: `^src/(${doors.join('|')})` },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    onlyImports('core-imports-only-core', 'core', [], 'core is pure TypeScript for Node and the browser: it imports nothing of ours but core.'),
    onlyImports(
      'reference-imports-core',
      'reference',
      ['core'],
      'the CPU oracle never uses what it checks: it reads core only (the model config, layout and block plan are plain data there).',
    ),
    onlyImports(
      'gpu-below-model',
      'gpu',
      ['reference', 'core'],
      'the GPU runtime and kernels know no model, training or UI; they share shape checks with their reference twins.',
    ),
    onlyImports(
      'model-below-train',
      'model',
      ['gpu', 'reference', 'core'],
      'the model runs on the GPU; it is driven by train, jobs and backends, never the other way.',
    ),
    onlyImports(
      'storage-keeps-data',
      'storage',
      ['core'],
      'storage keeps plain data (the records in core/records.ts) in IndexedDB: it imports core only, never the code that trains.',
    ),
    onlyImports('envs-beside-core', 'envs', ['core'], 'the simulated environments are plain TypeScript over core: no model, GPU or storage.'),
    onlyImports(
      'hub-beside-core',
      'hub',
      ['core'],
      "the Hugging Face Hub downloader (ids, the cache's layout, the Hub's protocol over fetch, the cache on disk in node.ts, in a browser's Cache Storage in browser.ts) knows no model, GPU or UI: it fetches files into a folder.",
    ),
    onlyImports(
      'backends-beside-train',
      'backends',
      ['hub', 'model', 'gpu', 'core'],
      'a backend wraps a model or an endpoint (a Hub id becomes a folder through src/hub/); it does not reach into training, jobs or storage.',
    ),
    onlyImports(
      'train-below-jobs',
      'train',
      ['storage', 'backends', 'model', 'gpu', 'reference', 'envs', 'core'],
      'train drives the model and storage, and uses backends where a stage needs one (a rejection-sampling teacher, an endpoint reward judge); it runs in the context of src/train/context.ts and never imports the jobs that host it.',
    ),
    onlyImports(
      'lib-is-the-package-api',
      'lib',
      ['backends', 'envs', 'core'],
      "the package's API (src/index.ts, node.ts, browser.ts and src/lib/) opens models through the backends, judges with core and plays the environments.",
    ),
    {
      name: 'nothing-imports-the-package',
      comment: "the package's entries and src/lib/ are a top like app and cli: the product never imports its own package API.",
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(lib/|index\\.ts$|node\\.ts$|browser\\.ts$)|${TESTS}` },
      to: { path: '^src/(lib/|index\\.ts$|node\\.ts$|browser\\.ts$)' },
    },
    onlyImports(
      'serve-below-cli',
      'serve',
      ['backends', 'envs', 'core'],
      'the HTTP server serves an opened backend (and the environments); the CLI opens what it serves.',
    ),
    onlyImports(
      'jobs-below-app',
      'jobs',
      ['train', 'storage', 'backends', 'model', 'gpu', 'reference', 'envs', 'core'],
      'the jobs worker and its jobs (train, bench, Playground, optimize, folders) run below the app and the CLI, which start them.',
    ),
    {
      name: 'app-never-touches-the-gpu',
      comment:
        'the page owns no GPU device and runs no model: the jobs worker does (src/jobs/worker.ts), and the app reaches it through src/jobs/client.ts and protocol.ts. What the app needs of the model is plain data in core/model/.',
      severity: 'error',
      from: { path: src('app') },
      to: { path: '^src/(gpu|reference|model)/' },
    },
    {
      name: 'nothing-imports-app',
      comment: 'app is the top: nothing below imports React views or stores.',
      severity: 'error',
      from: { pathNot: '^src/app/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'nothing-imports-cli',
      comment: 'cli is a top like app: the Node entry, imported by nothing else.',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'app-stores-below-views',
      comment: 'inside the app: views use components, stores and lib; stores use lib only.',
      severity: 'error',
      from: { path: '^src/app/stores/' },
      to: { path: '^src/app/(views|components)/|^src/app/[^/]+$' },
    },
    {
      name: 'app-components-below-views',
      comment: 'components are shared by views and import none of them.',
      severity: 'error',
      from: { path: '^src/app/components/' },
      to: { path: '^src/app/views/|^src/app/[^/]+$' },
    },
    {
      name: 'app-lib-below-stores',
      comment: 'app/lib holds small browser helpers (a file download) that stores and views share; it imports neither.',
      severity: 'error',
      from: { path: '^src/app/lib/' },
      to: { path: '^src/app/(stores|views|components)/|^src/app/[^/]+$' },
    },
    {
      name: 'no-circular',
      comment: 'no module reaches itself through its imports: a cycle is a layer that has folded back.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-react-below-app',
      comment: 'nothing outside the app knows about React or the app state library.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/app/' },
      to: { path: '(^|/)node_modules/(react|react-dom|zustand|wouter|monaco-editor|@tanstack/react-virtual)/' },
    },
    {
      name: 'core-needs-no-browser-or-gpu',
      comment: 'core runs in Node and the browser without WebGPU or IndexedDB.',
      severity: 'error',
      from: { path: src('core') },
      to: { path: '(^|/)node_modules/(webgpu|idb|@webgpu/types|onnxruntime-web)/' },
    },
  ],
  options: {
    // Type-only imports are dependencies too (storage importing a pipeline type was one).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    // WGSL is imported as text (`shaders/x.wgsl?raw`); it is not a module to check.
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] },
  },
};
