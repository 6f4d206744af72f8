// Finds a Chromium with WebGPU and the environment that WebGPU needs on machines
// without a GPU. Shared by the test runner, the Vitest/Playwright configs and the
// benchmarks so that every suite runs on the same browser with the same flags.
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';

const require = createRequire(import.meta.url);

/** Where to look, in order: $CHROMIUM_PATH, Debian's chromium, Playwright's own browser. */
export function findChromium() {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH is set to ${fromEnv}, but no file is there.`);
    return fromEnv;
  }
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (existsSync(p)) return p;
  try {
    const { chromium } = require('playwright');
    const p = chromium.executablePath();
    if (p && existsSync(p)) return p;
  } catch {
    // Playwright without its own browser: fall through to the message below.
  }
  return null;
}

export const HOW_TO_GET_CHROMIUM = [
  'No Chromium found. LWM Studio tests need a full Chromium build with WebGPU.',
  'Get one of:',
  '  - Debian/Ubuntu: sudo apt-get install -y chromium   (gives /usr/bin/chromium)',
  "  - Playwright's browser: npx playwright install chromium",
  '  - any Chromium/Chrome 113+: export CHROMIUM_PATH=/path/to/chrome',
].join('\n');

/** Command-line switches: WebGPU on, and nothing that phones home. */
export function chromiumArgs() {
  const args = [
    '--enable-unsafe-webgpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-default-apps',
    '--disable-quic',
  ];
  if (typeof process.getuid === 'function' && process.getuid() === 0) args.push('--no-sandbox');
  return args;
}

/**
 * Environment for Dawn (npm `webgpu`) and Chromium on a machine whose only Vulkan
 * driver is SwiftShader: the ICD JSON that Debian's chromium installs, its Vulkan
 * loader when the system has none, and a writable XDG_RUNTIME_DIR.
 */
export function gpuEnv(base = process.env) {
  const env = { ...base };
  const chromium = findChromium();
  const dirs = ['/usr/lib/chromium', chromium ? dirname(chromium) : null].filter(Boolean);
  if (!env.VK_ICD_FILENAMES && !hasHardwareVulkan()) {
    for (const d of dirs) {
      const icd = join(d, 'vk_swiftshader_icd.json');
      if (existsSync(icd)) {
        env.VK_ICD_FILENAMES = icd;
        break;
      }
    }
  }
  if (!systemHasVulkanLoader()) {
    for (const d of dirs) {
      if (existsSync(join(d, 'libvulkan.so.1'))) {
        env.LD_LIBRARY_PATH = [d, env.LD_LIBRARY_PATH].filter(Boolean).join(':');
        break;
      }
    }
  }
  if (!env.XDG_RUNTIME_DIR || !existsSync(env.XDG_RUNTIME_DIR)) {
    const dir = join(tmpdir(), 'lwm-xdg');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    env.XDG_RUNTIME_DIR = dir;
  }
  return env;
}

function systemHasVulkanLoader() {
  return ['/usr/lib/x86_64-linux-gnu/libvulkan.so.1', '/usr/lib/aarch64-linux-gnu/libvulkan.so.1', '/usr/lib/libvulkan.so.1', '/usr/lib64/libvulkan.so.1'].some(
    (p) => existsSync(p),
  );
}

function hasHardwareVulkan() {
  // An installed vendor ICD (NVIDIA, AMD, Intel) means a real GPU: leave the choice to the loader.
  return ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d'].some((d) => existsSync(d) && !process.env.LWM_FORCE_SWIFTSHADER);
}
