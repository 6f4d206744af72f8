// JSON Schema (draft-07, as ajv 8 runs it by default) of the Unified Environment Trajectory
// Schema in ./types.ts. Kept as a TypeScript object so both Node and the browser bundle it
// without a JSON import, and so the types and the schema sit side by side in review.
import { SPAN_KINDS, SYSTEM_PROMPT_FIELDS } from './types.ts';

const systemPromptProperties: Record<string, unknown> = Object.fromEntries(SYSTEM_PROMPT_FIELDS.map((f) => [f, { type: 'string' }]));

export const TRAJECTORY_SCHEMA = {
  $id: 'https://lwm-studio.local/schema/trajectory.json',
  title: 'LWM Studio trajectory',
  type: 'object',
  required: ['id', 'domain', 'system_prompt', 'turns'],
  properties: {
    id: { type: 'string', minLength: 1 },
    domain: { type: 'string', minLength: 1 },
    system_prompt: {
      type: 'object',
      required: [...SYSTEM_PROMPT_FIELDS],
      properties: { ...systemPromptProperties, text: { type: 'string' } },
      additionalProperties: false,
    },
    turns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['action', 'observation'],
        properties: {
          action: { type: 'string' },
          observation: { type: 'string' },
          metadata: {
            type: 'object',
            properties: {
              timestamp: { type: 'string', format: 'date-time' },
              source: { type: 'string' },
              loss_weight_override: { type: 'number', minimum: 0, maximum: 1 },
              spans: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['start', 'end', 'kind'],
                  properties: {
                    start: { type: 'integer', minimum: 0 },
                    end: { type: 'integer', minimum: 0 },
                    kind: { enum: [...SPAN_KINDS] },
                  },
                  additionalProperties: false,
                },
              },
            },
          },
        },
        additionalProperties: false,
      },
    },
    source: {
      type: 'object',
      required: ['format'],
      properties: {
        format: { type: 'string' },
        file: { type: 'string' },
        line: { type: 'integer', minimum: 1 },
        raw: {},
      },
      additionalProperties: false,
    },
    metadata: { type: 'object' },
  },
  additionalProperties: false,
} as const;

/** AgentWorldBench per-turn record (docs/method.md §8); prediction and judge fields are allowed, not required. */
export const AWB_RECORD_SCHEMA = {
  type: 'object',
  required: ['id', 'prompt', 'response', 'turn_idx'],
  properties: {
    task: { type: 'string' },
    id: { type: ['string', 'integer'] },
    prompt: { type: 'array', items: { type: 'string' } },
    response: { type: 'array', items: { type: 'string' } },
    current_prompt: { type: 'string' },
    system_str: { type: 'string' },
    turn_idx: { type: 'integer', minimum: 1 },
    total_turns: { type: 'integer', minimum: 1 },
  },
} as const;

const openAiToolCall = {
  type: 'object',
  required: ['function'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string' },
    function: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, arguments: { type: ['string', 'object'] } },
    },
  },
};

/** OpenAI chat-completions style record: `{messages: [...], tools?: [...]}`. */
export const OPENAI_RECORD_SCHEMA = {
  type: 'object',
  required: ['messages'],
  properties: {
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant', 'tool', 'function'] },
          content: {
            anyOf: [
              { type: 'string' },
              { type: 'null' },
              { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, text: { type: 'string' } } } },
            ],
          },
          name: { type: 'string' },
          tool_calls: { type: 'array', items: openAiToolCall },
          tool_call_id: { type: 'string' },
        },
      },
    },
    tools: { type: 'array' },
  },
} as const;

/** ShareGPT record (LLaMA-Factory flavour): `{conversations: [{from, value}], system?, tools?}`. */
export const SHAREGPT_RECORD_SCHEMA = {
  type: 'object',
  required: ['conversations'],
  properties: {
    conversations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['from', 'value'],
        properties: {
          from: { enum: ['human', 'user', 'gpt', 'assistant', 'system', 'function_call', 'observation', 'tool', 'function'] },
          value: { type: 'string' },
        },
      },
    },
    system: { type: 'string' },
    tools: { type: ['string', 'array'] },
  },
} as const;

/** AgentInstruct record: ShareGPT-like turns with a per-message `loss` flag. */
export const AGENTINSTRUCT_RECORD_SCHEMA = {
  type: 'object',
  required: ['conversations'],
  properties: {
    id: { type: ['string', 'integer'] },
    conversations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['from', 'value'],
        properties: {
          from: { enum: ['human', 'gpt'] },
          value: { type: 'string' },
          loss: { type: ['boolean', 'null'] },
        },
      },
    },
  },
} as const;
