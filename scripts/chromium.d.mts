export function findChromium(): string | null;
export function chromiumArgs(): string[];
export function gpuEnv(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export const HOW_TO_GET_CHROMIUM: string;
