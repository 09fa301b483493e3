/** One task in full: fields (editable), context timeline with supersede chains, progress, files, commits, sessions, events. */
import { useEffect, useState } from "preact/hooks";
import {
  type ArbeitEvent,
  CONTEXT_TYPES,
  type ContextEntry,
  type ProgressItem,
  RISK_LEVELS,
  type SessionLink,
  TASK_STATUSES,
  TASK_TYPES,
  type Task,
  type TaskSummary,
} from "../../../domain/types.js";
import type { Me } from "../../contract.js";
import { callTool } from "../api.js";
import { Countdown, ErrorAlert, Progress, Section, StatusBadge, useAction, When } from "../common.js";
import { useResource } from "../live.js";
import { FollowButton } from "./follow.js";

interface Briefing {
  task: Task;
  context_all?: ContextEntry[];
  progress?: ProgressItem[];
  files?: Array<{ file_path: string; operations: string[]; sessions: number; last_at: string }>;
  sessions?: SessionLink[];
  recent_events?: ArbeitEvent[];
  commits?: Array<{ sha: string; subject: string; files: string[]; session_id: string | null; at: string }>;
  relationships?: Array<{ id: string; from_task_id: string; to_task_id: string; type: string; other_deleted: boolean }>;
  parent?: TaskSummary | null;
  children?: TaskSummary[];
  blocked_by?: TaskSummary[];
  blocking?: TaskSummary[];
}

/** A task's metadata, key by key, each value as JSON; read-only (agents and integrations set it). */
function MetadataList({ metadata }: { metadata: Task["metadata"] }) {
  const entries = Object.entries(metadata ?? {});
  if (entries.length === 0) return <>none</>;
  return (
    <dl class="fields metadata">
      {entries.map(([key, value]) => (
        <>
          <dt key={`k-${key}`}>{key}</dt>
          <dd key={`v-${key}`}>
            <code>{JSON.stringify(value)}</code>
          </dd>
        </>
      ))}
    </dl>
  );
}
const INCLUDE = [
  "context_all",
  "progress",
  "files",
  "sessions",
  "recent_events",
  "commits",
  "relationships",
  "parent",
  "children",
  "blocked_by",
  "blocking",
];

function loadTask(taskId: string): Promise<Briefing> {
  return callTool<Briefing>("arbeit_task_get", { task_id: taskId, include: INCLUDE });
}

/** The editable fields, as the form holds them (text; "" for none). */
interface Draft {
  title: string;
  type: string;
  status: string;
  priority: string;
  owner: string;
  risk: string;
  impact: string;
  intent: string;
  description: string;
  plan: string;
  parent_id: string;
  blocked_by: string;
}

function draftOf(task: Task): Draft {
  return {
    title: task.title,
    type: task.type ?? "",
    status: task.status,
    priority: String(task.priority),
    owner: task.owner ?? "",
    risk: task.risk ?? "",
    impact: task.impact ?? "",
    intent: task.intent ?? "",
    description: task.description ?? "",
    plan: task.plan ?? "",
    parent_id: task.parent_id ?? "",
    blocked_by: task.blocked_by.join(" "),
  };
}

/** The intent is fixed once set (a blank one can still be filled in): the page shows it, never as a field. */
const intentFixed = (task: Task) => task.intent !== null && task.intent.trim() !== "";

const ids = (text: string) => text.split(/[\s,]+/).filter(Boolean);

/** The arguments of arbeit_task_update for the fields that differ from `base`. */
function changes(base: Draft, draft: Draft): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(draft) as Array<keyof Draft>) {
    if (draft[key] === base[key]) continue;
    const value = draft[key];
    switch (key) {
      case "priority":
        out[key] = Number(value);
        break;
      case "type":
      case "owner":
      case "risk":
      case "impact":
      case "parent_id":
        out[key] = value.trim() === "" ? null : value.trim();
        break;
      case "blocked_by":
        if (ids(value).join(" ") !== ids(base.blocked_by).join(" ")) out[key] = ids(value);
        break;
      default:
        out[key] = value;
    }
  }
  return out;
}

function EditTask({ task, reload }: { task: Task; reload: () => Promise<Task | undefined> }) {
  // The form's base: the task as it was when the person started; their draft on top of it.
  const [base, setBase] = useState(task);
  const [draft, setDraft] = useState(() => draftOf(task));
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const edits = changes(draftOf(base), draft);
  const dirty = Object.keys(edits).length > 0;
  // A newer task while nothing is typed: show it. While something is typed: keep it (Save may then conflict).
  useEffect(() => {
    if (!dirty && task.version !== base.version) {
      setBase(task);
      setDraft(draftOf(task));
    }
  }, [task, dirty, base.version]);
  const set = (key: keyof Draft) => (event: Event) => {
    setSaved(false);
    setDraft({ ...draft, [key]: (event.currentTarget as HTMLInputElement).value });
  };
  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const ok = await action.run(() =>
      callTool("arbeit_task_update", { task_id: task.id, ...edits, expected_version: base.version }),
    );
    if (ok) {
      const fresh = await reload();
      if (fresh) {
        setBase(fresh);
        setDraft(draftOf(fresh));
      }
      setSaved(true);
    }
  };
  /** The current version, with the person's changes kept on top of it. */
  const rebase = async () => {
    const fresh = await reload();
    if (!fresh) return;
    const next = draftOf(fresh);
    for (const key of Object.keys(edits) as Array<keyof Draft>) next[key] = draft[key];
    setBase(fresh);
    setDraft(next);
    action.clear();
  };
  const text = (key: keyof Draft, label: string, extra: Record<string, unknown> = {}) => (
    <label>
      {label}
      <input value={draft[key]} onInput={set(key)} {...extra} />
    </label>
  );
  const select = (key: keyof Draft, label: string, options: readonly string[], none?: string) => (
    <label>
      {label}
      <select value={draft[key]} onChange={set(key)}>
        {none !== undefined && <option value="">{none}</option>}
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </label>
  );
  const area = (key: keyof Draft, label: string) => (
    <label class="wide">
      {label}
      <textarea value={draft[key]} onInput={set(key)} rows={3} />
    </label>
  );
  return (
    <form onSubmit={save} aria-label="Edit task">
      <div class="form-grid">
        <label class="wide">
          Title
          <input value={draft.title} onInput={set("title")} required maxLength={500} />
        </label>
        {select("status", "Status", TASK_STATUSES)}
        {select("type", "Type", TASK_TYPES, "none")}
        {select("priority", "Priority", ["0", "1", "2", "3", "4"])}
        {text("owner", "Owner")}
        {select("risk", "Risk", RISK_LEVELS, "not assessed")}
        {select("impact", "Impact", RISK_LEVELS, "not assessed")}
        {text("parent_id", "Parent", { placeholder: "tkt-… (empty: none)" })}
        {text("blocked_by", "Blocked by", { placeholder: "tkt-… tkt-…" })}
        {intentFixed(base) ? (
          <label class="wide read-only-field">
            Intent <span class="muted small">(fixed once set)</span>
            <textarea class="read-only-value" readOnly value={base.intent ?? ""} rows={2} />
          </label>
        ) : (
          area("intent", "Intent")
        )}
        {area("description", "Description")}
        {area("plan", "Plan")}
      </div>
      <div class="form-actions">
        <button type="submit" disabled={action.busy || !dirty}>
          Save
        </button>
        <span class="muted">
          editing version {base.version}
          {task.version !== base.version && ` (now ${task.version}: changed since you started editing)`}
        </span>
        {dirty && (
          <button
            type="button"
            class="quiet"
            onClick={() => {
              setBase(task);
              setDraft(draftOf(task));
              action.clear();
            }}
          >
            Discard changes
          </button>
        )}
        {saved && !dirty && <span role="status">Saved.</span>}
      </div>
      <ErrorAlert error={action.error} onReload={rebase} onDismiss={action.clear} />
    </form>
  );
}

/**
 * The context timeline, oldest first: decisions, attempts, blockers and the rest. A superseded
 * entry stays, struck through, linked both ways with the entry that replaced it; a blocker a
 * person answered (a user_input superseding it) reads as the question and its answer.
 */
function Timeline({ entries }: { entries: ContextEntry[] }) {
  const supersedes = new Map<string, string>();
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  for (const entry of entries) if (entry.superseded_by) supersedes.set(entry.superseded_by, entry.id);
  const answers = (entry: ContextEntry) =>
    entry.type === "user_input" && byId.get(supersedes.get(entry.id) ?? "")?.type === "blocker";
  const answered = (entry: ContextEntry) =>
    entry.type === "blocker" && byId.get(entry.superseded_by ?? "")?.type === "user_input";
  const sorted = [...entries].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  if (sorted.length === 0) return <p class="muted">No context yet.</p>;
  return (
    <ol class="timeline">
      {sorted.map((entry) => (
        <li
          key={entry.id}
          id={entry.id}
          class={`type-${entry.type}${entry.superseded_by ? " superseded" : ""}${answers(entry) ? " answer" : ""}`}
          data-entry-id={entry.id}
          data-superseded-by={entry.superseded_by ?? undefined}
        >
          <div class="meta">
            <span class="badge">{entry.type}</span>
            <When at={entry.created_at} />
            <code class="muted">{entry.id}</code>
            {supersedes.has(entry.id) && (
              <span class="muted">
                {answers(entry) ? "answers" : "replaces"}{" "}
                <a href={`#${supersedes.get(entry.id)}`}>{supersedes.get(entry.id)}</a>
              </span>
            )}
            {entry.superseded_by && (
              <span class="muted">
                {answered(entry) ? "answered by" : "superseded by"}{" "}
                <a href={`#${entry.superseded_by}`}>{entry.superseded_by}</a>
              </span>
            )}
          </div>
          {entry.superseded_by && !answered(entry) ? (
            <del class="content">
              <pre>{entry.content}</pre>
            </del>
          ) : (
            <pre class="content">{entry.content}</pre>
          )}
        </li>
      ))}
    </ol>
  );
}

function AddContext({ taskId, after }: { taskId: string; after: () => unknown }) {
  const [type, setType] = useState("note");
  const [content, setContent] = useState("");
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (await action.run(() => callTool("arbeit_context_add", { task_id: taskId, type, content }))) {
      setContent("");
      after();
    }
  };
  return (
    <form onSubmit={submit} aria-label="Add context" class="form-grid">
      <label>
        Context type
        <select value={type} onChange={(event) => setType(event.currentTarget.value)}>
          {CONTEXT_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label class="wide">
        Content
        <textarea required value={content} onInput={(event) => setContent(event.currentTarget.value)} rows={3} />
      </label>
      <div class="form-actions wide">
        <button type="submit" disabled={action.busy}>
          Add context
        </button>
      </div>
      <div class="wide">
        <ErrorAlert error={action.error} onDismiss={action.clear} />
      </div>
    </form>
  );
}

function ProgressList({
  taskId,
  items,
  editable,
  after,
}: {
  taskId: string;
  items: ProgressItem[];
  editable: boolean;
  after: () => unknown;
}) {
  const [text, setText] = useState("");
  const action = useAction();
  const done = items.filter((item) => item.completed).length;
  const add = async (event: Event) => {
    event.preventDefault();
    if (await action.run(() => callTool("arbeit_progress_add", { task_id: taskId, items: [text] }))) {
      setText("");
      after();
    }
  };
  return (
    <>
      <Progress done={done} total={items.length} label={`Progress of ${taskId}`} />
      <ul class="plain-list">
        {items.map((item) => (
          <li key={item.id} data-progress-id={item.id}>
            <label class="inline">
              <input
                type="checkbox"
                checked={item.completed}
                disabled={!editable || item.completed || action.busy}
                onChange={async () => {
                  if (await action.run(() => callTool("arbeit_progress_complete", { item_ids: [item.id] }))) after();
                }}
              />
              {item.content}
            </label>
          </li>
        ))}
      </ul>
      {items.length === 0 && <p class="muted">No progress items.</p>}
      {editable && (
        <form onSubmit={add} class="form-actions" aria-label="Add progress">
          <label>
            New progress item
            <input required maxLength={2000} value={text} onInput={(event) => setText(event.currentTarget.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Add progress
          </button>
        </form>
      )}
      <ErrorAlert error={action.error} onDismiss={action.clear} />
    </>
  );
}

function TaskRefs({ tasks }: { tasks: TaskSummary[] | undefined }) {
  if (!tasks || tasks.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="plain-list">
      {tasks.map((task) => (
        <li key={task.id}>
          {task.status && <StatusBadge status={task.status} />} <a href={`/task/${task.id}`}>{task.title}</a>{" "}
          <code class="muted">{task.id}</code>
        </li>
      ))}
    </ul>
  );
}

function ClaimControl({ task, editable, after }: { task: Task; editable: boolean; after: () => unknown }) {
  const action = useAction();
  if (!task.lease_expires_at) return <span class="muted">not claimed</span>;
  return (
    <span>
      by {task.owner ?? "?"} (session <code>{task.claim_session}</code>), <Countdown until={task.lease_expires_at} />{" "}
      {editable && (
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          aria-label={`Break claim on ${task.id}`}
          onClick={async () => {
            if (
              await action.run(() =>
                callTool("arbeit_task_claim", { action: "release", task_id: task.id, force: true }),
              )
            )
              after();
          }}
        >
          Break claim
        </button>
      )}
      <ErrorAlert error={action.error} onDismiss={action.clear} />
    </span>
  );
}

export function TaskPage({ taskId, me }: { taskId: string; me: Me | undefined }) {
  const briefing = useResource(`task:${taskId}`, () => loadTask(taskId));
  const data = briefing.data;
  const editable = me !== undefined && !me.read_only;
  const reloadTask = async (): Promise<Task | undefined> => {
    try {
      const fresh = await loadTask(taskId);
      void briefing.reload();
      return fresh.task;
    } catch {
      return undefined;
    }
  };
  const after = () => void briefing.reload();
  if (!data) {
    return (
      <section data-view="task" class="view" data-task-id={taskId}>
        <h1>{taskId}</h1>
        <ErrorAlert error={briefing.error} onReload={briefing.reload} />
        {!briefing.error && <p class="muted">Loading…</p>}
      </section>
    );
  }
  const { task } = data;
  return (
    <section data-view="task" class="view" data-task-id={task.id}>
      <div class="toolbar">
        <h1>{task.title}</h1>
        <StatusBadge status={task.status} />
        {task.blocked && <span class="badge blocked">blocked</span>}
        <code class="muted">{task.id}</code>
        <FollowButton taskId={task.id} />
      </div>
      <ErrorAlert error={briefing.error} onReload={briefing.reload} />
      <div class="detail">
        <div>
          <Section title="Context" count={data.context_all?.length ?? 0}>
            <Timeline entries={data.context_all ?? []} />
            {editable && <AddContext taskId={task.id} after={after} />}
          </Section>
          <Section title="Fields">
            {/* Set by the store, never by a person: shown as text, outside the form. */}
            <dl class="fields" aria-label="Read-only fields">
              <dt>List</dt>
              <dd>{task.list_id}</dd>
              <dt>Claim</dt>
              <dd>
                <ClaimControl task={task} editable={editable} after={after} />
              </dd>
              <dt>Active form</dt>
              <dd>{task.active_form ?? "none"}</dd>
              <dt>Version</dt>
              <dd>{task.version}</dd>
              <dt>Created</dt>
              <dd>
                <When at={task.created_at} />
              </dd>
              <dt>Updated</dt>
              <dd>
                <When at={task.updated_at} />
              </dd>
              <dt>Metadata</dt>
              <dd>
                <MetadataList metadata={task.metadata} />
              </dd>
              {!editable && (
                <>
                  <dt>Type</dt>
                  <dd>{task.type ?? "none"}</dd>
                  <dt>Priority</dt>
                  <dd>P{task.priority}</dd>
                  <dt>Owner</dt>
                  <dd>{task.owner ?? "none"}</dd>
                  <dt>Risk / impact</dt>
                  <dd>
                    {task.risk ?? "not assessed"} / {task.impact ?? "not assessed"}
                  </dd>
                  <dt>Intent</dt>
                  <dd>
                    <pre>{task.intent ?? "none"}</pre>
                  </dd>
                  <dt>Description</dt>
                  <dd>
                    <pre>{task.description ?? "none"}</pre>
                  </dd>
                  <dt>Plan</dt>
                  <dd>
                    <pre>{task.plan ?? "none"}</pre>
                  </dd>
                </>
              )}
            </dl>
            {editable && <EditTask task={task} reload={reloadTask} />}
          </Section>
          <Section title="Events" count={data.recent_events?.length ?? 0}>
            <a href={`/activity?task=${encodeURIComponent(task.id)}`}>The whole history of this task</a>
            <ul class="plain-list events">
              {(data.recent_events ?? []).map((event) => (
                <li key={event.id}>
                  <span class="seq">#{event.seq}</span> <When at={event.timestamp} />{" "}
                  <strong>{event.event_type}</strong> {event.agent && <span class="owner">{event.agent}</span>}
                </li>
              ))}
            </ul>
          </Section>
        </div>
        <div>
          <Section title="Progress" count={data.progress?.length ?? 0}>
            <ProgressList taskId={task.id} items={data.progress ?? []} editable={editable} after={after} />
          </Section>
          <Section title="Relationships">
            <dl class="fields">
              <dt>Parent</dt>
              <dd>
                <TaskRefs tasks={data.parent ? [data.parent] : []} />
              </dd>
              <dt>Children</dt>
              <dd>
                <TaskRefs tasks={data.children} />
              </dd>
              <dt>Blocked by</dt>
              <dd>
                <TaskRefs tasks={data.blocked_by} />
              </dd>
              <dt>Blocking</dt>
              <dd>
                <TaskRefs tasks={data.blocking} />
              </dd>
              <dt>Other links</dt>
              <dd>
                <ul class="plain-list">
                  {(data.relationships ?? [])
                    .filter((r) => r.type !== "blocks" && r.type !== "parent_of")
                    .map((r) => {
                      const other = r.from_task_id === task.id ? r.to_task_id : r.from_task_id;
                      return (
                        <li key={r.id}>
                          {r.from_task_id === task.id ? r.type : `${r.type} (from)`}{" "}
                          <a href={`/task/${other}`}>{other}</a>
                          {r.other_deleted && <span class="muted"> (deleted)</span>}
                        </li>
                      );
                    })}
                </ul>
              </dd>
            </dl>
          </Section>
          <Section title="Files" count={data.files?.length ?? 0}>
            <ul class="plain-list">
              {(data.files ?? []).map((file) => (
                <li key={file.file_path}>
                  <code>{file.file_path}</code> <span class="muted small">{file.operations.join(", ")}</span>
                </li>
              ))}
            </ul>
          </Section>
          <Section title="Commits" count={data.commits?.length ?? 0}>
            <ul class="plain-list">
              {(data.commits ?? []).map((commit) => (
                <li key={commit.sha}>
                  <code>{commit.sha.slice(0, 10)}</code> {commit.subject}{" "}
                  <span class="muted small">
                    {commit.files.length} files, <When at={commit.at} />
                  </span>
                </li>
              ))}
            </ul>
          </Section>
          <Section title="Sessions" count={data.sessions?.length ?? 0}>
            <ul class="plain-list">
              {(data.sessions ?? []).map((session) => (
                <li key={session.id}>
                  <code>{session.session_id}</code> {session.agent && <span class="owner">{session.agent}</span>}{" "}
                  <When at={session.created_at} />
                </li>
              ))}
            </ul>
          </Section>
        </div>
      </div>
    </section>
  );
}
