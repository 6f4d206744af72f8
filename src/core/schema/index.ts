// The schema room: shared types, the JSON Schema, validation with located errors.
export * from './types.ts';
export * from './schema.ts';
export * from './validate.ts';
export * from './locate.ts';
