declare module 'webgpu' {
  export function create(flags: string[]): GPU;
  export const globals: Record<string, unknown>;
}
