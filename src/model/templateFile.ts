// The prompt template a run trained with, kept in an exported folder as lwm_template.json (the
// PromptTemplate as JSON: version, description, Jinja text, per-domain texts, the observation's
// tags). Our own checkpoints' exports (GPT-2 `--to hf`, `--to onnx`) carry it because their folder
// has no chat template; a fine-tune of a pretrained Hugging Face model carries it beside the
// model's chat template, holding our template UNWRAPPED: the backends wrap it in the chat format
// again (src/core/templates/chatWrap.ts), as training did. Without this file a turn would be
// rendered with a default layout instead of the one the weights learned. The ONNX and Hugging
// Face folder loaders read it back (checked as the Prompts view checks a template); errors name
// the file.
import { checkTemplate, type PromptTemplate } from '../core/templates/index.ts';

export const TEMPLATE_FILE = 'lwm_template.json';

export class TemplateFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateFileError';
  }
}

/** The file's bytes. */
export function templateFileBytes(t: PromptTemplate): Uint8Array {
  const { version, description, text, targetOpen, targetClose, domains } = t;
  return new TextEncoder().encode(JSON.stringify({ version, description, text, ...(domains && { domains }), targetOpen, targetClose }, null, 2) + '\n');
}

/** The template in a parsed lwm_template.json; an error names the file (`where`) and the field at fault. */
export function templateFromJson(json: unknown, where: string): PromptTemplate {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new TemplateFileError(`${where}: must be a JSON object (a prompt template)`);
  const j = json as Record<string, unknown>;
  for (const field of ['version', 'text', 'targetOpen', 'targetClose']) {
    if (typeof j[field] !== 'string' || (field !== 'text' && j[field] === ''))
      throw new TemplateFileError(`${where}: ${field} must be a ${field === 'text' ? '' : 'non-empty '}string, got ${JSON.stringify(j[field])}`);
  }
  const domains = j.domains;
  if (
    domains !== undefined &&
    (typeof domains !== 'object' || domains === null || Array.isArray(domains) || Object.values(domains).some((v) => typeof v !== 'string'))
  ) {
    throw new TemplateFileError(`${where}: domains must map domain names to template texts`);
  }
  const t: PromptTemplate = {
    version: j.version as string,
    description: typeof j.description === 'string' ? j.description : '',
    text: j.text as string,
    ...(domains !== undefined && { domains: { ...(domains as Record<string, string>) } }),
    targetOpen: j.targetOpen as string,
    targetClose: j.targetClose as string,
  };
  // A text that does not parse, or never shows the history or the action, would fail at the first
  // turn without naming this file, or render prompts without them.
  const problems = checkTemplate(t);
  if (problems.length) throw new TemplateFileError(problems.map((p) => `${where}: ${p}`).join('\n'));
  return t;
}
