// The search folder's front door: the environment, its scripted agent and knowledge text live in env.ts.
export * from './env.ts';
