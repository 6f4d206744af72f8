// "What to do" under an error: the help text of src/app/lib/backendHelp.ts, folded unless it is
// the whole answer (a CORS refusal, where the message alone cannot say what went wrong).
export function ProblemHelp({ help, open }: { help: string | null | undefined; open?: boolean }) {
  if (!help) return null;
  return (
    <details open={open || undefined}>
      <summary>What to do</summary>
      <p className="help">{help}</p>
    </details>
  );
}
