// Vitest setup for the gpu-browser project: the page must expose WebGPU, or every GPU test
// fails with the reason (never skips).
if (!('gpu' in navigator)) {
  console.error('[gpu-browser] navigator.gpu is missing: Chromium was started without WebGPU.');
}
