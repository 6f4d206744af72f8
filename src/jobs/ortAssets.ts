// onnxruntime-web's WebAssembly binary, bundled by Vite into the site (dist/assets/) and handed to
// onnxruntime-web by its URL, so an ONNX model never makes it fetch anything from a CDN. The
// build that carries the WebGPU execution provider (JSEP) runs on WASM too, so it is the only one
// needed; its JavaScript glue is inside onnxruntime-web's bundled module. Only the URL is imported
// here: onnxruntime-web itself loads when the first ONNX model is opened (src/model/onnx/session.ts).
import { setOrtWasmPaths } from '../model/onnx/session.ts';
import ortWasm from 'onnxruntime-web/dist/ort-wasm-simd-threaded.jsep.wasm?url';

/** Points onnxruntime-web at the bundled binary (the worker calls it once, at start). */
export function useBundledOrtWasm(): void {
  setOrtWasmPaths({ wasm: new URL(ortWasm, self.location.href).href });
}
