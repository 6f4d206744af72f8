// The package's Node entry (`import … from 'lwm-studio'` in Node): the shared API (src/index.ts),
// and opening a model by its path, as the `lwm` commands do: a checkpoint file, a Hugging Face
// folder or an ONNX folder, on Dawn's WebGPU (or onnxruntime's WASM); an endpoint or a baseline by
// its reference.
import type { BackendRef } from './core/backendRef.ts';
import { nodeSource, refFromModel, type PathOptions } from './backends/node.ts';
import { openOwned, type WorldModel } from './lib/model.ts';

export * from './index.ts';
export { modelPath, refFromModel, refFromPath, type PathOptions } from './backends/node.ts';

/**
 * Opens a model: `model` is a path (a checkpoint, a Hugging Face folder, an ONNX folder), a
 * Hugging Face Hub id (`org/name` or `org/name@revision`, downloaded into the Hugging Face cache
 * unless it is there; a path on disk wins), `copy-last`, or a BackendRef (e.g.
 * `{kind: 'endpoint', endpoint: {baseUrl, model}}`). `apiKey` is an endpoint's key (else
 * $LWM_API_KEY, then $OPENAI_API_KEY); `log` receives a download's progress lines. Closing the
 * model frees the GPU device it opened.
 */
export async function openModel(
  model: string | BackendRef,
  options: PathOptions & { apiKey?: string; log?: (line: string) => void } = {},
): Promise<WorldModel> {
  const { apiKey, log, ...path } = options;
  const ref = typeof model === 'string' ? await refFromModel(model, path, log) : model;
  return openOwned(ref, nodeSource(apiKey !== undefined ? { apiKey } : {}));
}
