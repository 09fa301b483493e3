/** Pieces several views share: alerts, countdowns, badges, the filter bar, the create form. */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { TASK_STATUSES, TASK_TYPES } from "../../domain/types.js";
import type { Me, Overview, OverviewTask } from "../contract.js";
import { callTool, errorText } from "./api.js";
import { type Resource, useTick } from "./live.js";
import { type Filters, navigate, withParams } from "./router.js";

/** A write the person started: busy while it runs, its error kept until dismissed or retried. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ code: string; message: string }>();
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(errorText(failure));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}

/** The difference between the database's clock and the browser's, from the latest `now` read. */
let clockOffset = 0;
export function setServerNow(now: string | undefined): void {
  if (!now) return;
  const server = Date.parse(now);
  if (!Number.isNaN(server)) clockOffset = server - Date.now();
}

export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** A lease counting down every second (in the database's time). */
export function Countdown({ until }: { until: string }) {
  const tick = useTick();
  const left = Date.parse(until) - (tick + clockOffset);
  const expired = left <= 0;
  return (
    <time class={expired ? "lease expired" : "lease"} dateTime={until} title={`Lease until ${until}`}>
      {expired ? `expired ${formatDuration(-left)} ago` : `${formatDuration(left)} left`}
    </time>
  );
}

export function When({ at }: { at: string }) {
  const date = new Date(at);
  const text = Number.isNaN(date.getTime()) ? at : date.toLocaleString();
  return (
    <time dateTime={at} title={at}>
      {text}
    </time>
  );
}

export function ErrorAlert({
  error,
  onReload,
  onDismiss,
}: {
  error: { code: string; message: string } | undefined;
  onReload?: () => void;
  onDismiss?: () => void;
}) {
  if (!error) return null;
  return (
    <div class="alert" role="alert">
      <strong>{error.code}</strong> {error.message}
      {onReload && (
        <button type="button" onClick={onReload}>
          Reload
        </button>
      )}
      {onDismiss && (
        <button type="button" class="quiet" onClick={onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status.replace("_", " ")}</span>;
}

export function TaskBadges({ task }: { task: Pick<OverviewTask, "ready" | "blocked"> }) {
  return (
    <>
      {task.ready && <span class="badge ready">ready</span>}
      {task.blocked && <span class="badge blocked">blocked</span>}
    </>
  );
}

export function Progress({ done, total, label }: { done: number; total: number; label?: string }) {
  if (total === 0) return null;
  return (
    <span class="progress">
      <progress value={done} max={total} aria-label={label ?? "Progress"} />
      <span class="muted">
        {done}/{total}
      </span>
    </span>
  );
}

export function Section({ title, children, count }: { title: string; children: ComponentChildren; count?: number }) {
  return (
    <section class="panel">
      <h2>
        {title}
        {count !== undefined && <span class="count">{count}</span>}
      </h2>
      {children}
    </section>
  );
}

/** Does `task` pass the filters (all but `list`, which the server applies)? */
export function matches(task: OverviewTask, filters: Filters): boolean {
  if (filters.list && task.list_id !== filters.list) return false;
  if (filters.status && task.status !== filters.status) return false;
  if (filters.type && (task.type ?? "none") !== filters.type) return false;
  if (filters.owner && (task.owner ?? "") !== filters.owner) return false;
  if (filters.q) {
    const q = filters.q.toLowerCase();
    if (!task.title.toLowerCase().includes(q) && !task.id.toLowerCase().includes(q)) return false;
  }
  return true;
}

export function isFiltered(filters: Filters): boolean {
  return Object.values(filters).some((value) => value !== "");
}

/** The filter bar: every change replaces the URL's query, so a view's URL is its filters too. */
export function FilterBar({
  filters,
  lists,
  owners,
  path,
}: {
  filters: Filters;
  lists: string[];
  owners: string[];
  path: string;
}) {
  // A filter replaces its own key only: the view's other settings in the URL (the board's lanes) stay.
  const set = (key: keyof Filters, value: string) => navigate(withParams(path, { [key]: value }), true);
  /** One filter's select; a value in the URL but not among the options is still offered. */
  const choice = (key: keyof Filters, label: string, any: string, values: readonly string[]) => (
    <label>
      {label}
      <select
        aria-label={`Filter by ${key}`}
        value={filters[key]}
        onChange={(event) => set(key, event.currentTarget.value)}
      >
        <option value="">{any}</option>
        {[...new Set([...values, ...(filters[key] ? [filters[key]] : [])])].map((value) => (
          <option key={value} value={value}>
            {value === "none" && key === "type" ? "untyped" : value}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <form class="filters" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
      <label>
        Search
        <input
          id="filter-q"
          type="search"
          placeholder="title or id  ( / )"
          value={filters.q}
          onInput={(event) => set("q", event.currentTarget.value)}
        />
      </label>
      {choice("list", "List", "all lists", lists)}
      {choice("status", "Status", "any status", TASK_STATUSES)}
      {choice("type", "Type", "any type", [...TASK_TYPES, "none"])}
      {choice("owner", "Owner", "anyone", owners)}
      {isFiltered(filters) && (
        <button type="button" class="quiet" onClick={() => navigate(path, true)}>
          Clear filters
        </button>
      )}
    </form>
  );
}

export function ownersOf(tasks: OverviewTask[]): string[] {
  const owners = new Set<string>();
  for (const task of tasks) if (task.owner) owners.add(task.owner);
  return [...owners].sort();
}

/** The form that creates a task (arbeit_task_create). */
export function CreateTask({ me, lists, defaultList }: { me: Me | undefined; lists: string[]; defaultList: string }) {
  const [title, setTitle] = useState("");
  const [type, setType] = useState("");
  const [priority, setPriority] = useState("2");
  const [parent, setParent] = useState("");
  const [list, setList] = useState(defaultList);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ code: string; message: string }>();
  const [created, setCreated] = useState<string>();
  if (!me || me.read_only) return null;
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const args: Record<string, unknown> = { title, priority: Number(priority) };
      if (type) args.type = type;
      if (parent.trim()) args.parent_id = parent.trim();
      if (list.trim()) args.list_id = list.trim();
      const data = await callTool<{ task: { id: string } }>("arbeit_task_create", args);
      setCreated(data.task.id);
      setTitle("");
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <details class="create">
      <summary>New task</summary>
      <form class="create-form" onSubmit={submit}>
        <label>
          Title
          <input required maxLength={500} value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
        </label>
        <label>
          Type
          <select value={type} onChange={(event) => setType(event.currentTarget.value)}>
            <option value="">none</option>
            {TASK_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Priority
          <select value={priority} onChange={(event) => setPriority(event.currentTarget.value)}>
            {[0, 1, 2, 3, 4].map((p) => (
              <option key={p} value={String(p)}>
                P{p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Parent
          <input placeholder="tkt-…" value={parent} onInput={(event) => setParent(event.currentTarget.value)} />
        </label>
        <label>
          List
          <input list="known-lists" value={list} onInput={(event) => setList(event.currentTarget.value)} />
          <datalist id="known-lists">
            {lists.map((l) => (
              <option key={l} value={l} />
            ))}
          </datalist>
        </label>
        <button type="submit" disabled={busy}>
          Create task
        </button>
        <ErrorAlert error={error} onDismiss={() => setError(undefined)} />
        {created && (
          <p class="note" role="status">
            Created <a href={`/task/${created}`}>{created}</a>
          </p>
        )}
      </form>
    </details>
  );
}

/** The head of a view over the overview (board, tree): title, filters, the create form, load errors. */
export function OverviewHead({
  title,
  path,
  filters,
  overview,
  owners,
  me,
}: {
  title: string;
  path: string;
  filters: Filters;
  overview: Resource<Overview>;
  owners: string[];
  me: Me | undefined;
}) {
  const lists = overview.data?.lists ?? [];
  return (
    <>
      <div class="toolbar">
        <h1>{title}</h1>
        <FilterBar filters={filters} lists={lists} owners={owners} path={path} />
        <CreateTask me={me} lists={lists} defaultList={filters.list} />
      </div>
      <ErrorAlert error={overview.error} onReload={overview.reload} />
      {!overview.data && !overview.error && <p class="muted">Loading…</p>}
    </>
  );
}
