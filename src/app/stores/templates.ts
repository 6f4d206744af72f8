// System-prompt templates: the lineage v0…vN in IndexedDB (each with a parent and a note), the
// editor's unsaved draft, and the stage → template-distribution setting (localStorage).
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import {
  checkDistribution,
  DEFAULT_STAGE_TEMPLATES,
  fromLegacy,
  isLegacyTemplate,
  type PromptTemplate,
  type TemplateDistribution,
  type TrainingStage,
} from '../../core/templates/index.ts';
import type { TemplateVersion } from '../../core/records.ts';
import { addTemplateVersion, listTemplateVersions, nextVersionName } from '../../storage/templates.ts';

/** The stages a user sets a template mix for in the editor (eval stays on one fixed wording). */
export const EDITABLE_STAGES = ['cpt', 'sft', 'rl'] as const;

export interface TemplateDraft {
  base: string;
  text: string;
  domain?: string | null;
}

export type StageDistributions = Record<TrainingStage, TemplateDistribution>;

interface TemplateState {
  status: 'idle' | 'loading' | 'ready' | 'error';
  error: string | null;
  versions: TemplateVersion[];
  /** The version the editor's draft started from, the draft text (a template text) and the domain whose text it is (null: the default text). */
  draft: TemplateDraft | null;
  stages: StageDistributions;
  load(): Promise<void>;
  setDraft(draft: TemplateDraft | null): void;
  /** Stores `template` as the next version vN; returns its name. */
  createVersion(template: Omit<PromptTemplate, 'version'>, parent: string, note: string): Promise<string>;
  /** Sets one stage's mix when it validates; returns the problems otherwise. */
  setStage(stage: TrainingStage, dist: TemplateDistribution): string[];
}

export function templateSet(versions: TemplateVersion[]): Record<string, PromptTemplate> {
  return Object.fromEntries(versions.map((v) => [v.version, v.template]));
}

export const useTemplateStore = create<TemplateState>()(
  persist(
    (set, get) => ({
      status: 'idle',
      error: null,
      versions: [],
      draft: null,
      stages: structuredClone(DEFAULT_STAGE_TEMPLATES) as StageDistributions,
      async load() {
        if (get().status === 'loading') return;
        set({ status: 'loading' });
        try {
          set({ versions: await listTemplateVersions(), status: 'ready', error: null });
        } catch (e) {
          set({ status: 'error', error: `Could not read template versions from browser storage: ${(e as Error).message}` });
        }
      },
      setDraft(draft) {
        set({ draft });
      },
      async createVersion(template, parent, note) {
        const version = nextVersionName(get().versions.map((v) => v.version));
        await addTemplateVersion({ version, parent, note, createdAt: Date.now(), builtin: false, template: { ...template, version } });
        set({ versions: await listTemplateVersions() });
        return version;
      },
      setStage(stage, dist) {
        const errors = checkDistribution(dist, templateSet(get().versions));
        if (!errors.length) set({ stages: { ...get().stages, [stage]: dist } });
        return errors;
      },
    }),
    {
      name: 'lwm.templates',
      version: 2,
      // Version 1 kept the draft as JSON of a template (before templates became text): convert it.
      migrate: (persisted, from) => migrateDraft(persisted as { draft?: TemplateDraft | null; stages: StageDistributions }, from),
      partialize: (s) => ({ draft: s.draft, stages: s.stages }),
    },
  ),
);

/** A draft persisted by an older app: a JSON template becomes its text; anything unreadable is dropped. */
export function migrateDraft<T extends { draft?: TemplateDraft | null }>(persisted: T, from: number): T {
  if (from >= 2 || !persisted?.draft) return persisted;
  try {
    const v: unknown = JSON.parse(persisted.draft.text);
    const text = isLegacyTemplate({ version: 'draft', ...(v as object) })
      ? fromLegacy({ version: 'draft', ...(v as object) } as Parameters<typeof fromLegacy>[0]).text
      : null;
    return { ...persisted, draft: text === null ? null : { base: persisted.draft.base, text, domain: null } };
  } catch {
    return { ...persisted, draft: null };
  }
}
