export const LOCAL_ENDPOINTS: string[];
export function extraConnectSources(value?: string): string[];
export function contentSecurityPolicy(extra?: string[]): string;
