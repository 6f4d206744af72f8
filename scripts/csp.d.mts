export const LOCAL_ENDPOINTS: string[];
export const HUB_HOSTS: string[];
export function hubConnectSources(value?: string): string[];
export function extraConnectSources(value?: string): string[];
export function contentSecurityPolicy(extra?: string[], hub?: string[]): string;
