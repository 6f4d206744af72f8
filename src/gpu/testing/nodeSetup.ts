// Vitest setup for the gpu-node project: navigator.gpu from Dawn.
import { installNodeGpu } from '../node.ts';

await installNodeGpu();
