// The Train form's field builders: a select or a text input bound to one field of the persisted
// form (stores/trainForm.ts), in a labelled Field (components/Field.tsx).
import type { ReactNode } from 'react';
import { Field } from '../../components/Field.tsx';
import { Options } from '../../components/Options.tsx';
import { useTrainFormStore } from '../../stores/trainForm.ts';
import type { FormErrors, FormField } from './form.ts';

/** The form's field builders: a select or a text input bound to one form field, with its error and hint. */
export function useFormFields(errors: FormErrors) {
  const form = useTrainFormStore((s) => s.form);
  const setForm = useTrainFormStore((s) => s.set);

  const select = (field: FormField, label: string, options: [string, string][], hint?: ReactNode) => (
    <Field id={`train-${field}`} label={label} error={errors[field]} hint={hint}>
      <select id={`train-${field}`} value={form[field]} onChange={(e) => setForm({ [field]: e.target.value })} aria-invalid={errors[field] ? true : undefined}>
        <Options items={options} value={([v]) => v} label={([, text]) => text} />
      </select>
    </Field>
  );

  const input = (field: FormField, label: string, hint?: ReactNode, type: 'number' | 'text' | 'password' = 'text') => (
    <Field id={`train-${field}`} label={label} error={errors[field]} hint={hint}>
      <input
        id={`train-${field}`}
        type={type === 'password' ? 'password' : 'text'}
        autoComplete={type === 'password' ? 'off' : undefined}
        inputMode={type === 'number' ? 'numeric' : undefined}
        value={form[field]}
        onChange={(e) => setForm({ [field]: e.target.value })}
        aria-invalid={errors[field] ? true : undefined}
        aria-describedby={errors[field] ? `train-${field}-error` : hint ? `train-${field}-hint` : undefined}
      />
    </Field>
  );

  return { form, setForm, select, input };
}
