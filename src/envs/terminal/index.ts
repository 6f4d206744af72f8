// The terminal folder's front door: the environment (env.ts) over a shell (shell.ts) and file
// tree (fs.ts); its scripted agent is agent.ts and its knowledge text knowledge.ts.
export * from './env.ts';
