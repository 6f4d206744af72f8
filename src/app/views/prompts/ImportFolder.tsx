// Importing a folder of DOMAIN/system_prompt.txt files as a new template version, and choosing
// which domain's text of a per-domain version the editor shows.
import { useState } from 'react';
import { importPromptFolder, type FolderFile, type PromptTemplate } from '../../../core/templates/index.ts';
import type { TemplateBody } from './validation.ts';

/** The text of the chosen files, with their paths inside the chosen folder. */
async function readFiles(list: FileList): Promise<FolderFile[]> {
  const files = [...list].filter((f) => f.name === 'system_prompt.txt' || list.length < 200);
  return Promise.all(files.map(async (f) => ({ path: f.webkitRelativePath || f.name, text: await f.text() })));
}

export function ImportFolder({ base, onImport }: { base: PromptTemplate; onImport(t: TemplateBody, note: string): Promise<string> }) {
  const [problems, setProblems] = useState<string[]>([]);
  const [done, setDone] = useState<string | null>(null);
  const onFiles = async (list: FileList | null) => {
    if (!list?.length) return;
    setDone(null);
    const r = importPromptFolder(await readFiles(list), base);
    setProblems(r.problems);
    if (!r.template) return;
    try {
      const v = await onImport(r.template, `imported per-domain prompts: ${r.domains.join(', ')}`);
      setDone(`Imported ${r.domains.length} domain prompts as ${v}.`);
    } catch (e) {
      setProblems([`Saving failed: ${(e as Error).message}`]);
    }
  };
  return (
    <div className="field">
      <label htmlFor="import-prompt-folder">
        Import a folder of DOMAIN/system_prompt.txt files (placeholders like {'{tool_definitions}'}); the turn layout comes from {base.version}
      </label>
      <input
        id="import-prompt-folder"
        type="file"
        multiple
        data-testid="import-prompt-folder"
        // A folder picker where the browser has one; plain multi-file selection keeps the relative paths in tests.
        {...({ webkitdirectory: '' } as Record<string, string>)}
        onChange={(e) => void onFiles(e.target.files)}
      />
      {done ? (
        <p role="status" className="small">
          {done}
        </p>
      ) : null}
      {problems.length ? (
        <ul className="error-text small" role="alert" data-testid="import-problems">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function DomainChooser({ domains, domain, onSwitch }: { domains: string[]; domain: string | null; onSwitch(d: string | null): void }) {
  if (!domains.length) return null;
  return (
    <div className="field">
      <label htmlFor="template-domain">Text for</label>
      <select id="template-domain" value={domain ?? ''} onChange={(e) => onSwitch(e.target.value || null)}>
        <option value="">other domains</option>
        {domains.map((d) => (
          <option key={d} value={d}>
            {d}
          </option>
        ))}
      </select>
    </div>
  );
}
