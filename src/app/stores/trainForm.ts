// The Train view's form as typed, kept in localStorage so a reload keeps the settings.
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import { DEFAULT_FORM, SECRET_FIELDS, type TrainForm } from '../views/train/form.ts';

interface TrainFormState {
  form: TrainForm;
  set(patch: Partial<TrainForm>): void;
  reset(): void;
}

export const useTrainFormStore = create<TrainFormState>()(
  persist(
    (set) => ({
      form: DEFAULT_FORM,
      set: (patch) => set((s) => ({ form: { ...s.form, ...patch } })),
      reset: () => set({ form: DEFAULT_FORM }),
    }),
    {
      name: 'lwm.trainForm',
      version: 1,
      // API keys stay in memory only.
      partialize: (s) => ({ form: { ...s.form, ...Object.fromEntries(SECRET_FIELDS.map((k) => [k, ''])) } }),
      merge: (persisted, current) => ({ ...current, form: { ...DEFAULT_FORM, ...(persisted as Partial<TrainFormState>)?.form } }),
    },
  ),
);
