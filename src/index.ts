/// <reference types="@webgpu/types" preserve="true" />
// The package's API (`import … from 'lwm-studio'`), the same in Node and the browser: open a world
// model, simulate a turn (streamed), judge a prediction, play a built-in environment. Node's entry
// (src/node.ts) adds opening a model by its path; the browser's (src/browser.ts) by its bytes or
// an endpoint. Everything here is a thin door onto the product's own code: the one backend opener
// (src/backends/open.ts), the judges (src/core/judge/), the environments (src/envs/).
export { openModel, type SimulateOptions, type Turn, type WorldModel } from './lib/model.ts';
export { judgeTurn, type TurnJudgement } from './lib/judge.ts';
export { openEnvironment, type EnvironmentEpisode } from './lib/environment.ts';
export type { BackendRef, CheckpointRef, EndpointRef, HfModelRef, OnnxModelRef } from './core/backendRef.ts';
export type { BackendSource, ModelInfo } from './backends/open.ts';
export type { SystemPrompt, SpanLabel } from './core/schema/types.ts';
export { DOMAINS } from './core/schema/types.ts';
export type { Scores } from './core/judge/types.ts';
