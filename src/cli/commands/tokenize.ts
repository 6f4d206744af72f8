// `lwm tokenize --model HF_FOLDER (--text T | --chat T) [--system S] [--no-special] [--json]`:
// the token ids Hugging Face's tokenizer gives for a text (special tokens its post-processor adds
// included, as transformers' tokenizer(text) does) or for one user message rendered with the
// folder's chat template and the generation prompt (as apply_chat_template(...,
// add_generation_prompt=True, tokenize=True), the messages' contents encoded as text: an added
// token's string inside one stays characters, as in every prompt LWM Studio sends). For checking a
// folder against Python.
import type { CliIO } from '../io.ts';
import { parseCommandArgs, UsageError } from '../io.ts';
import { modelArg } from './common.ts';
import { HfFolderError, loadHfTokenizer } from '../../model/hf/files.ts';
import { nodeFolder } from '../../model/hf/node.ts';
import { HfTokenizerError, type ChatMessage } from '../../core/tokenizer/hf.ts';

const USAGE = `lwm tokenize --model HF_FOLDER (--text TEXT | --chat TEXT) [--system TEXT] [--no-special] [--json]

  --model HF_FOLDER  a Hugging Face model folder (tokenizer.json, tokenizer_config.json), or a
                     Hub id org/name[@revision] (downloaded into the Hugging Face cache)
  --text TEXT        tokenize TEXT as tokenizer(TEXT) does (special tokens added by default)
  --chat TEXT        one user message (after --system's, if given) in the chat template,
                     ending with the generation prompt; the messages are text
                     (an added token's string in them is not that token)
  --no-special       --text without the special tokens the post-processor adds
  --json             print {"ids": [...], "tokens": N, "text": ...} (text: what was tokenized)

Without --json, prints the ids on one line, separated by spaces.`;

export default async function tokenize(argv: string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    help: { type: 'boolean', short: 'h' },
    model: { type: 'string' },
    text: { type: 'string' },
    chat: { type: 'string' },
    system: { type: 'string' },
    'no-special': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.out(`usage: ${USAGE}\n`);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);
  if (!values.model) throw new UsageError(`--model HF_FOLDER is required\nusage: ${USAGE}`);
  if ((values.text === undefined) === (values.chat === undefined)) throw new UsageError(`give one of --text and --chat\nusage: ${USAGE}`);
  if (values.system !== undefined && values.chat === undefined) throw new UsageError('--system goes with --chat');
  if (values['no-special'] && values.chat !== undefined) throw new UsageError('--no-special goes with --text (a chat template writes its own special tokens)');
  try {
    const tok = await loadHfTokenizer(await nodeFolder(await modelArg(io, values.model)));
    let text: string;
    let ids: number[];
    if (values.chat !== undefined) {
      const messages: ChatMessage[] = [
        ...(values.system !== undefined ? [{ role: 'system', content: values.system }] : []),
        { role: 'user', content: values.chat },
      ];
      text = tok.renderChat(messages, { addGenerationPrompt: true });
      ids = tok.encodeChat(messages, { addGenerationPrompt: true });
    } else {
      text = values.text!;
      ids = tok.encode(text, { addSpecialTokens: !values['no-special'] });
    }
    io.out(values.json ? JSON.stringify({ ids, tokens: ids.length, text }) + '\n' : ids.join(' ') + '\n');
    return 0;
  } catch (e) {
    if (e instanceof HfFolderError || e instanceof HfTokenizerError) {
      io.err(`lwm tokenize: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
