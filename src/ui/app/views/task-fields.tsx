/**
 * A task's fields, each edited where it is shown: a click (or Enter on the focused value) opens an
 * editor in place; Enter saves (Ctrl+Enter in a text area, where Enter is a new line), so does
 * leaving the field; Esc cancels and goes no further (it does not take the page back). A save
 * changes this one field through arbeit_task_update, whole or not at all; a refusal (another
 * session's claim, a conflicting change) shows beside the field with what the person may do.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Task } from "../../../domain/types.js";
import { callTool, errorText } from "../api.js";

/** One field of a task as the page edits it: its text in the editor, and the update that sets it. */
export interface FieldSpec {
  /** The field's name (`data-field`). */
  name: string;
  label: string;
  /** The field's value as the editor holds it ("" for none). */
  text(task: Task): string;
  /** The arguments of arbeit_task_update that set the field to `text`; throws Error for text it cannot take. */
  args(text: string): Record<string, unknown>;
  editor:
    | { kind: "text"; placeholder?: string }
    | { kind: "area" }
    | { kind: "select"; options: Array<[string, string]> };
  /** How the value reads when not edited (default: the text, or "none"). */
  show?(task: Task): ComponentChildren;
  /**
   * The shown value holds links: the value is drawn as it is and a small button beside it opens
   * the editor (a link inside a button is neither).
   */
  linked?: boolean;
}

interface Editing {
  /** The field's text when editing began, and the task's version then. */
  start: string;
  version: number;
  text: string;
}

type Failure = { code: string; message: string };

/** How long a change made elsewhere stays marked on a field not being edited. */
const CHANGED_MARK_MS = 8_000;

export function InlineField({
  task,
  spec,
  editable,
  refresh,
  after,
  heading,
}: {
  task: Task;
  spec: FieldSpec;
  editable: boolean;
  /** Loads the task again and returns it (undefined when that failed). */
  refresh: () => Promise<Task | undefined>;
  /** Shows the page's data again after a save. */
  after: () => void;
  /** The field is the page's heading (the title). */
  heading?: boolean;
}) {
  const value = spec.text(task);
  const [editing, setEditing] = useState<Editing>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Failure>();
  const [saved, setSaved] = useState(false);
  const [changedElsewhere, setChangedElsewhere] = useState(false);
  const wrapper = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLInputElement & HTMLTextAreaElement & HTMLSelectElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  /** What was shown last, and whether this page's own save changed it. */
  const shown = useRef({ value, ownSave: false });
  /** The text a save was refused for: leaving the field does not send it again. */
  const refusedText = useRef<string | undefined>(undefined);
  /** The last change of a select came from a pointer (a choice made), not from arrow keys. */
  const pointer = useRef(false);
  const focusOpener = useRef(false);
  /**
   * Whether the editor is open, as events see it at once: a field removed from the page may still
   * report its blur, and a closed editor saves nothing.
   */
  const active = useRef(false);
  /** The editor's text as typed, at once (state catches up at the next render). */
  const draft = useRef("");
  /** A save is under way (seen at once by an Enter and a blur that follow each other closely). */
  const saving = useRef(false);

  // A change made elsewhere while the field is shown (not edited): take it, and say so.
  useEffect(() => {
    if (shown.current.value === value) return;
    const own = shown.current.ownSave;
    shown.current = { value, ownSave: false };
    if (own || editing) return;
    setChangedElsewhere(true);
    setSaved(false);
    const timer = setTimeout(() => setChangedElsewhere(false), CHANGED_MARK_MS);
    return () => clearTimeout(timer);
  }, [value, editing]);

  useEffect(() => {
    if (editing) {
      input.current?.focus();
    } else if (focusOpener.current) {
      focusOpener.current = false;
      opener.current?.focus();
    }
  }, [editing !== undefined]);

  const open = () => {
    if (!editable) return;
    setError(undefined);
    setSaved(false);
    setChangedElsewhere(false);
    refusedText.current = undefined;
    active.current = true;
    draft.current = value;
    setEditing({ start: value, version: task.version, text: value });
  };
  const close = (refocus: boolean) => {
    active.current = false;
    focusOpener.current = refocus;
    setEditing(undefined);
    setError(undefined);
    refusedText.current = undefined;
  };

  const save = async (how: { refocus: boolean; over?: boolean; force?: boolean }) => {
    if (!active.current || !editing || saving.current) return;
    const text = draft.current;
    if (text === editing.start && !how.over && !how.force) {
      close(how.refocus);
      return;
    }
    let args: Record<string, unknown>;
    try {
      args = spec.args(text);
    } catch (failure) {
      refusedText.current = text;
      setError({ code: "INVALID_ARGUMENT", message: failure instanceof Error ? failure.message : String(failure) });
      return;
    }
    const send = (version: number) =>
      callTool("arbeit_task_update", {
        task_id: task.id,
        ...args,
        expected_version: version,
        ...(how.force ? { force: true } : {}),
      });
    // The person changes this field only: other fields changed since they began do not conflict
    // with it, so the newest version is expected unless this field itself changed meanwhile.
    const untouched = (latest: Task) => spec.text(latest) === editing.start;
    saving.current = true;
    setBusy(true);
    setError(undefined);
    try {
      try {
        await send(how.over || untouched(task) ? task.version : editing.version);
      } catch (failure) {
        // The page had not yet heard of a newer version: read it, and if this field is still as
        // the person found it, send the same change against it once.
        if (errorText(failure).code !== "VERSION_CONFLICT") throw failure;
        const fresh = await refresh();
        if (!fresh || !(how.over || untouched(fresh))) throw failure;
        await send(fresh.version);
      }
      shown.current.ownSave = true;
      close(how.refocus);
      setSaved(true);
      after();
    } catch (failure) {
      refusedText.current = text;
      setError(errorText(failure));
      if (how.refocus) input.current?.focus();
    } finally {
      saving.current = false;
      setBusy(false);
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      // Esc leaves the editor and nothing else: the page's own Esc (go back) must not see it.
      event.preventDefault();
      event.stopPropagation();
      close(true);
      return;
    }
    if (event.key !== "Enter" || event.isComposing) return;
    if (spec.editor.kind === "area" && !(event.ctrlKey || event.metaKey)) return;
    event.preventDefault();
    void save({ refocus: true });
  };
  const onBlur = (event: FocusEvent) => {
    // Focus moving to this field's own buttons (retry, cancel) is not leaving it.
    if (wrapper.current?.contains(event.relatedTarget as Node | null)) return;
    if (!active.current || !editing || saving.current || draft.current === refusedText.current) return;
    void save({ refocus: false });
  };
  const setText = (text: string) => {
    if (!editing || saving.current) return;
    draft.current = text;
    setEditing({ ...editing, text });
  };

  const display = spec.show ? spec.show(task) : value === "" ? <span class="muted">none</span> : value;
  const Tag = heading ? "h1" : "div";
  const changedUnderneath = editing !== undefined && value !== editing.start;

  let body: ComponentChildren;
  if (!editable) {
    body = <div class="field-value">{display}</div>;
  } else if (!editing) {
    body = spec.linked ? (
      <div class="field-value">
        {display}{" "}
        <button type="button" class="quiet edit-field" ref={opener} onClick={open} aria-label={`Edit ${spec.label}`}>
          Edit
        </button>
      </div>
    ) : (
      <button type="button" class="field-value editable" ref={opener} onClick={open} title="Click to edit">
        {display}
      </button>
    );
  } else {
    const common = {
      ref: input,
      "aria-label": spec.label,
      value: editing.text,
      // Kept focusable while a save runs (a disabled field drops focus, and Esc with it).
      "aria-busy": busy,
      onKeyDown,
      onBlur,
    };
    const editor = spec.editor;
    body = (
      <>
        {editor.kind === "text" && (
          <input {...common} placeholder={editor.placeholder} onInput={(event) => setText(event.currentTarget.value)} />
        )}
        {editor.kind === "area" && (
          <textarea
            {...common}
            rows={Math.min(12, Math.max(3, editing.text.split("\n").length + 1))}
            onInput={(event) => setText(event.currentTarget.value)}
          />
        )}
        {editor.kind === "select" && (
          <select
            {...common}
            onPointerDown={() => (pointer.current = true)}
            onKeyUp={() => (pointer.current = false)}
            onChange={(event) => {
              setText(event.currentTarget.value);
              // A choice made with the pointer is the person's word; arrow keys only move.
              if (pointer.current) void save({ refocus: true });
            }}
          >
            {editor.options.map(([option, label]) => (
              <option key={option} value={option}>
                {label}
              </option>
            ))}
          </select>
        )}
        <span class="muted small field-hint">
          {busy
            ? "Saving…"
            : editor.kind === "area"
              ? "Ctrl+Enter or leaving the field saves; Esc cancels."
              : "Enter or leaving the field saves; Esc cancels."}
        </span>
      </>
    );
  }

  return (
    <Tag
      ref={wrapper as never}
      class={`inline-field${editing ? " editing" : ""}${changedElsewhere ? " changed" : ""}`}
      data-field={spec.name}
    >
      {body}
      {changedUnderneath && (
        <p class="note field-note" role="status">
          Changed elsewhere since you began: now {value === "" ? "none" : `“${value}”`}. Saving asks before replacing
          it.
        </p>
      )}
      {changedElsewhere && !editing && (
        <span class="muted small field-note" role="status">
          changed elsewhere just now
        </span>
      )}
      {saved && !editing && (
        <span class="muted small field-note" role="status">
          Saved.
        </span>
      )}
      {error && (
        <div class="alert field-error" role="alert">
          <strong>{error.code}</strong> {error.message}
          {error.code === "VERSION_CONFLICT" && (
            <button type="button" disabled={busy} onClick={() => void save({ refocus: true, over: true })}>
              Save mine over it
            </button>
          )}
          {error.code === "ALREADY_CLAIMED" && (
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() => void save({ refocus: true, force: true })}
            >
              Break the claim and save
            </button>
          )}
          <button type="button" class="quiet" onClick={() => close(true)}>
            Cancel
          </button>
        </div>
      )}
    </Tag>
  );
}

/** A field set by the store or fixed once set: shown as text, never offered for editing. */
export function ReadOnlyField({
  name,
  children,
  why,
}: {
  name: string;
  children: ComponentChildren;
  /** Why it cannot be edited, when a person might expect to. */
  why?: string;
}) {
  return (
    <div class="inline-field read-only" data-field={name} data-read-only="true">
      <div class="field-value">{children}</div>
      {why && <span class="muted small field-note">{why}</span>}
    </div>
  );
}
