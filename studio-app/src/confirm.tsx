/**
 * The question asked before every change: a dialog that names what will be done, with
 * Cancel and a button that says the action. Some ask for a value too (a new id, a count).
 */
import { useEffect, useRef, useState } from 'preact/hooks';

/** What to ask. */
export interface Question {
  title: string;
  /** What the change will do, in full (given the value typed, for a question with an input). */
  message: string | ((value: string) => string);
  /** The confirming button's text, such as "Roll back". */
  confirm: string;
  danger?: boolean;
  /** A value to type in first. */
  input?: { label: string; initial?: string; placeholder?: string; required?: boolean };
}

type Pending = Question & { resolve(answer: string | null): void };

let show: ((question: Pending) => void) | null = null;

/** Ask `question`; resolves to the value typed ('' without an input), or null when cancelled. */
export function ask(question: Question): Promise<string | null> {
  return new Promise((resolve) => {
    if (show === null) resolve(null);
    else show({ ...question, resolve });
  });
}

/** Where the dialog is drawn: once, in the page. */
export function ConfirmHost() {
  const [pending, setPending] = useState<Pending | null>(null);
  const [value, setValue] = useState('');
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    show = (q) => {
      setValue(q.input?.initial ?? '');
      setPending(q);
    };
    return () => {
      show = null;
    };
  }, []);
  useEffect(() => {
    if (pending && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [pending]);
  const answer = (result: string | null) => {
    pending?.resolve(result);
    setPending(null);
    dialog.current?.close();
  };
  return (
    <dialog
      ref={dialog}
      class="confirm"
      onCancel={() => answer(null)}
      aria-labelledby="confirm-title"
    >
      {pending && (
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault();
            if (pending.input?.required && value.trim() === '') return;
            answer(pending.input ? value.trim() : '');
          }}
        >
          <h2 id="confirm-title">{pending.title}</h2>
          <p class="confirm-message">
            {typeof pending.message === 'string' ? pending.message : pending.message(value.trim())}
          </p>
          {pending.input && (
            <label class="confirm-input">
              {pending.input.label}
              <input
                value={value}
                placeholder={pending.input.placeholder}
                onInput={(event) => setValue(event.currentTarget.value)}
              />
            </label>
          )}
          <div class="confirm-buttons">
            <button type="button" onClick={() => answer(null)}>
              Cancel
            </button>
            <button type="submit" class={pending.danger ? 'danger' : 'primary'}>
              {pending.confirm}
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
