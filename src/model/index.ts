/**
 * src/model: what a GPT is, independent of where it runs.
 *
 *   config.ts       ModelConfig, validateConfig (errors name the field), PRESETS, paramCount,
 *                   forwardFlops / trainStepFlops (napkin maths for benchmarks)
 *   params.ts       paramLayout: every parameter in ONE flat Float32Array, GPT-2 names (files
 *                   add `.weight` to the embeddings `wte`, `wpe`, as transformers does), each
 *                   tensor at a 64-element (256-byte) aligned offset; gradients and Adam m, v
 *                   share the layout; decayed tensors (matrices) form one contiguous range
 *   init.ts         initParams(config, seed): GPT-2 initialisation, byte-identical per seed
 *   safetensors.ts  readSafetensors / writeSafetensors, strict validation; safetensorsHeader
 *                   parses a header alone, so a large file's tensors are planned before read
 *   checkpoint.ts   saveCheckpoint / loadCheckpoint: weights + config + tokenizer + step
 *                   (+ AdamW state), byte-exact round trip; checkpointFiles splits it into the
 *                   weights file (loads in transformers) and the optimizer file; names there
 *
 *   plan.ts         blockPlan(config): which ops a transformer block runs (norm kind, RoPE and
 *                   its scaling, GELU or SwiGLU MLP, heads and k/v heads, biases, q/k head
 *                   norms): GPT-2, Llama, Qwen2 and Qwen3 are configurations of one block
 *   hf/config.ts    configFromHf: a Hugging Face config.json (Llama / Qwen2 / Qwen3, both
 *                   spellings) → ModelConfig; errors name the config.json field
 *   hf/weights.ts   paramsFromHf / paramsToHf: model.layers.N.self_attn.q_proj.weight … ⇄ the
 *                   flat layout (transposed, q | k | v and gate | up fused)
 *   block.ts        GpuBlocks: the one GPU block encoder, forward and backward, for the model
 *                   and its trainer (gpt.ts, trainer.ts) and KV-cache generation (generate.ts)
 *   gpt.ts          GpuModel: the weights (f32 or f16, an optional LoRA adapter), the forward
 *                   of a batch shape, its activations, logits and evaluation loss
 *   trainer.ts      GpuTrainer: a GpuModel and its training: gradients, backward, AdamW state
 *                   and step, the GSPO path, checkpoints with the optimiser state
 *   shards.ts       the flat layout on the GPU in buffers of at most one storage binding
 *                   (rt.bindingLimit): tensors packed, a matrix larger than a binding cut by rows;
 *                   ParamBuffers holds params, gradients or Adam state in a plan's buffers
 *   ends.ts         GpuEmbedding / GpuHead: the token embedding and LM head over split tables
 *   pieceMatmul.ts  a product with a weight split by rows (column blocks through lda / ldc)
 *   sharedPrefix.ts SharedPrefixGspo: GSPO update passes with a group's prompt processed once,
 *                   its K/V shared by the G responses (docs/method.md §10); same numbers as GpuTrainer.gspoStep
 *   optim.ts        ADAMW_DEFAULTS and lrAt, the learning-rate schedule
 *
 *   hf/files.ts     Hugging Face model folders (imported directly, not through this index, so
 *                   the tokenizer and Jinja libraries load only where a folder is read): one file
 *                   interface (hf/node.ts: a path in Node; filesFolder: picked or dropped File
 *                   objects), single or sharded safetensors read as f32 by byte range, the
 *                   tokenizer and chat template (core/tokenizer/hf.ts), generation_config's eos ids
 *   hf/memory.ts    the memory a run needs before loading, a refusal that says what would fit,
 *                   and splitPlan for tensors larger than one storage binding
 *
 * The CPU oracle for all of it is src/reference/gpt.ts (forward, backward, the training loop,
 * generation), built from the kernels' twins on the same flat layout and the same block plan;
 * the WebGPU model must follow its losses.
 *
 * Presets (parameters; flat buffer incl. padding; FLOPs of one training step at batch 8 × context,
 * from trainStepFlops):
 *
 *   preset  params      buffer      step (8 × context)
 *   micro      35,712      36,224   113 MFLOP  (8 × 64)    CI on SwiftShader
 *   bench     120,576     120,576   378 MFLOP  (8 × 64)    the engine benchmark (400 ms goal ≈ 0.95 GFLOP/s)
 *   mini    1,055,488   1,055,488    14.5 GFLOP (8 × 256)  integrated GPU, minutes
 *   small  13,793,280  13,793,280   367 GFLOP (8 × 512)   laptop GPU
 *
 * Memory for training ≈ 4 buffers of the flat size (params, grads, m, v) × 4 bytes, plus
 * activations: small needs ~220 MB for the four and its activations grow with batch × context.
 */
export * from './config.ts';
export * from './params.ts';
export * from './init.ts';
export * from './safetensors.ts';
export * from './checkpoint.ts';
export * from './hf/config.ts';
export * from './hf/weights.ts';
