// The import boundaries of src/ (docs/architecture.md draws them): dependencies point one way,
//
//   app, cli  →  train  →  backends, storage  →  model  →  gpu  →  reference (per-op twins)  →  core
//
// and everything may import core, which imports nothing of ours but core. `npm test` runs this
// check as its own step (scripts/test.mjs); src/boundaries.test.ts shows each rule catching a
// wrong import in a fixture tree. Type-only imports count: a type is a door too.
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
      ['core', 'model/(config|params|plan|optim)\\.ts$'],
      'the CPU oracle never uses what it checks: per-op twins import core only; the whole-model reference reads the model config, parameter layout, block plan and optimiser settings (plain data, no GPU).',
    ),
    onlyImports(
      'gpu-below-model',
      'gpu',
      ['reference', 'core'],
      'the GPU runtime and kernels know no model, training or UI; they share shape checks with their reference twins.',
    ),
    onlyImports('model-below-train', 'model', ['gpu', 'reference', 'core'], 'the model is driven by train and backends, never the other way.'),
    {
      name: 'storage-keeps-data',
      comment: 'storage persists plain data: it imports core, model types and the run spec (src/train/spec.ts), never the code that trains.',
      severity: 'error',
      from: { path: src('storage'), pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/(storage|core)/|^src/train/spec\\.ts$|^src/model/' },
    },
    {
      name: 'storage-imports-model-types-only',
      comment: 'what storage needs from the model is its types (config, preset names), not GPU code.',
      severity: 'error',
      from: { path: src('storage'), pathNot: TESTS },
      to: { path: '^src/model/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'run-spec-is-plain-data',
      comment: 'the run spec is shared with storage and the app, so it imports only core and the model config.',
      severity: 'error',
      from: { path: '^src/train/spec\\.ts$' },
      to: { path: '^src/', pathNot: '^src/core/|^src/model/config\\.ts$|^src/train/spec\\.ts$' },
    },
    onlyImports(
      'train-above-backends',
      'train',
      ['storage', 'backends', 'model', 'gpu', 'reference', 'core'],
      'train drives the model and storage, and uses backends where a stage needs one (a rejection-sampling teacher, an endpoint reward judge); backends never import train.',
    ),
    onlyImports(
      'backends-beside-train',
      'backends',
      ['model', 'gpu', 'core'],
      'a backend wraps a model or an endpoint; it does not reach into training or storage.',
    ),
    {
      name: 'app-never-touches-the-gpu',
      comment: 'the page owns no GPU device: the jobs worker does (src/train/worker.ts), and the app reaches it through src/train/client.ts and protocol.ts.',
      severity: 'error',
      from: { path: src('app') },
      to: { path: '^src/(gpu|reference)/' },
    },
    {
      name: 'app-reads-only-model-config',
      comment:
        'from the model the app needs only its presets and config, and the checkpoint file format (pure bytes in, bytes out: splitting a download into weights and optimizer files); running one goes through a worker job or a backend.',
      severity: 'error',
      from: { path: src('app') },
      to: { path: '^src/model/', pathNot: '^src/model/(config|checkpoint|params|safetensors)\\.ts$' },
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
