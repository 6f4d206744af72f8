// The os folder's front door: the desktop environment (env.ts); its scripted agent is agent.ts.
export * from './env.ts';
