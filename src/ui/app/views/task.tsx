/** One task in full: the context timeline first, then each field edited in place, the claim and the file reservations, progress, links, files, commits, sessions, events. */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import {
  CONTEXT_TYPES,
  type ContextEntry,
  type ProgressItem,
  RISK_LEVELS,
  TASK_STATUSES,
  TASK_TYPES,
  type Task,
  type TaskSummary,
} from "../../../domain/types.js";
import type { Me, ReservationRow, TaskPageLinks, TaskPageView } from "../../contract.js";
import { callTool, getJson } from "../api.js";
import { Countdown, ErrorAlert, Progress, Section, StatusBadge, useAction, When } from "../common.js";
import { useResource } from "../live.js";
import { FollowButton } from "./follow.js";
import { BreakReservation } from "./reservations.js";
import { type FieldSpec, InlineField, ReadOnlyField } from "./task-fields.js";

function loadTask(taskId: string): Promise<TaskPageView> {
  return getJson<TaskPageView>(`/api/task?id=${encodeURIComponent(taskId)}`);
}

const ids = (text: string) => text.split(/[\s,]+/).filter(Boolean);
/** Text as an optional field takes it: trimmed, and null when empty. */
const orNull = (text: string) => (text.trim() === "" ? null : text.trim());
const choices = (values: readonly string[], none?: string): Array<[string, string]> => [
  ...(none === undefined ? [] : [["", none] as [string, string]]),
  ...values.map((value) => [value, value] as [string, string]),
];

/** The intent is fixed once set (a blank one can still be filled in): then it is shown, never edited. */
const intentFixed = (task: Task) => task.intent !== null && task.intent.trim() !== "";

const TITLE: FieldSpec = {
  name: "title",
  label: "Title",
  text: (task) => task.title,
  args: (title) => ({ title }),
  editor: { kind: "text" },
};

/** The short fields, in the order the page lists them. */
const SHORT_FIELDS: FieldSpec[] = [
  {
    name: "status",
    label: "Status",
    text: (task) => task.status,
    args: (status) => ({ status }),
    editor: { kind: "select", options: TASK_STATUSES.map((s) => [s, s.replace("_", " ")]) },
    show: (task) => <StatusBadge status={task.status} />,
  },
  {
    name: "type",
    label: "Type",
    text: (task) => task.type ?? "",
    args: (type) => ({ type: orNull(type) }),
    editor: { kind: "select", options: choices(TASK_TYPES, "none") },
  },
  {
    name: "priority",
    label: "Priority",
    text: (task) => String(task.priority),
    args: (priority) => ({ priority: Number(priority) }),
    editor: { kind: "select", options: [0, 1, 2, 3, 4].map((p) => [String(p), `P${p}`]) },
    show: (task) => `P${task.priority}`,
  },
  {
    name: "owner",
    label: "Owner",
    text: (task) => task.owner ?? "",
    args: (owner) => ({ owner: orNull(owner) }),
    editor: { kind: "text", placeholder: "a name (empty: none)" },
  },
  {
    name: "risk",
    label: "Risk",
    text: (task) => task.risk ?? "",
    args: (risk) => ({ risk: orNull(risk) }),
    editor: { kind: "select", options: choices(RISK_LEVELS, "not assessed") },
    show: (task) => task.risk ?? <span class="muted">not assessed</span>,
  },
  {
    name: "impact",
    label: "Impact",
    text: (task) => task.impact ?? "",
    args: (impact) => ({ impact: orNull(impact) }),
    editor: { kind: "select", options: choices(RISK_LEVELS, "not assessed") },
    show: (task) => task.impact ?? <span class="muted">not assessed</span>,
  },
];

const longText = (name: "intent" | "description" | "plan", label: string): FieldSpec => ({
  name,
  label,
  text: (task) => task[name] ?? "",
  args: (text) => ({ [name]: text }),
  editor: { kind: "area" },
  show: (task) => (task[name] ? <pre>{task[name]}</pre> : <span class="muted">none</span>),
});

const PARENT: FieldSpec = {
  name: "parent_id",
  label: "Parent",
  text: (task) => task.parent_id ?? "",
  args: (parent) => ({ parent_id: orNull(parent) }),
  editor: { kind: "text", placeholder: "tkt-… (empty: none)" },
  linked: true,
};

const BLOCKED_BY: FieldSpec = {
  name: "blocked_by",
  label: "Blocked by",
  text: (task) => task.blocked_by.join(" "),
  args: (text) => ({ blocked_by: ids(text) }),
  editor: { kind: "text", placeholder: "tkt-… tkt-… (empty: none)" },
  linked: true,
};

/** One metadata key, its value edited as JSON; an empty value drops the key. */
function metadataField(key: string): FieldSpec {
  return {
    name: `metadata.${key}`,
    label: `Metadata ${key}`,
    text: (task) => (task.metadata && key in task.metadata ? JSON.stringify(task.metadata[key]) : ""),
    args: (text) => {
      if (text.trim() === "") return { metadata: { [key]: null } };
      try {
        return { metadata: { [key]: JSON.parse(text) } };
      } catch {
        throw new Error(`${key} must be JSON: "text" in quotes, a number, true, false, a list or an object.`);
      }
    },
    editor: { kind: "text", placeholder: "JSON (empty: drop the key)" },
    show: (task) => <code>{JSON.stringify(task.metadata?.[key])}</code>,
  };
}

/** Adds a metadata key: its name and its JSON value, saved together. */
function AddMetadata({ task, after }: { task: Task; after: () => void }) {
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = value;
    }
    if (
      await action.run(() => callTool("arbeit_task_update", { task_id: task.id, metadata: { [key.trim()]: parsed } }))
    ) {
      setKey("");
      setValue("");
      after();
    }
  };
  return (
    <details class="add-metadata">
      <summary>Add metadata</summary>
      <form onSubmit={submit} aria-label="Add metadata" class="form-actions">
        <label>
          Key
          <input required maxLength={100} value={key} onInput={(event) => setKey(event.currentTarget.value)} />
        </label>
        <label>
          Value
          <input
            required
            placeholder="JSON, or plain text"
            value={value}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          Add
        </button>
        <ErrorAlert error={action.error} onDismiss={action.clear} />
      </form>
    </details>
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

/**
 * The live file reservations that concern the task (made for it, or another session's covering a
 * file it wrote, reserved or plans to touch), beside its claim; a person may break one.
 */
function TaskReservations({
  task,
  rows,
  editable,
  after,
}: {
  task: Task;
  rows: ReservationRow[];
  editable: boolean;
  after: () => unknown;
}) {
  if (rows.length === 0) return <p class="muted">No file reservation concerns this task.</p>;
  return (
    <ul class="plain-list reservations">
      {rows.map((row) => (
        <li key={row.id} data-reservation-id={row.id} data-pattern={row.pattern}>
          <code>{row.pattern}</code> <span class={`badge mode-${row.mode}`}>{row.mode}</span>{" "}
          {row.agent ?? <span class="muted">unknown</span>} <code class="muted">{row.session}</code>{" "}
          {row.task_id === task.id ? (
            <span class="muted">for this task</span>
          ) : row.task_id ? (
            <span class="muted">
              for <a href={`/task/${row.task_id}`}>{row.task_id}</a>
            </span>
          ) : (
            <span class="muted">for no task</span>
          )}
          , <Countdown until={row.until} /> {editable && <BreakReservation pattern={row.pattern} after={after} />}
        </li>
      ))}
    </ul>
  );
}

/** A path or a sha as a link to its page on the project's forge, or as text where none is known. */
function Linked({ href, children }: { href: string | undefined; children: string }) {
  if (!href) return <code>{children}</code>;
  return (
    <a href={href} target="_blank" rel="noopener noreferrer">
      <code>{children}</code>
    </a>
  );
}

export function TaskPage({ taskId, me }: { taskId: string; me: Me | undefined }) {
  const page = useResource(`task:${taskId}`, () => loadTask(taskId));
  const editable = me !== undefined && !me.read_only;
  /** Loads the task again (for a field's save) and hands it over; the page reloads beside it. */
  const refresh = async (): Promise<Task | undefined> => {
    try {
      const fresh = await loadTask(taskId);
      void page.reload();
      return fresh.briefing.task;
    } catch {
      return undefined;
    }
  };
  const after = () => void page.reload();
  if (!page.data) {
    return (
      <section data-view="task" class="view" data-task-id={taskId}>
        <h1>{taskId}</h1>
        <ErrorAlert error={page.error} onReload={page.reload} />
        {!page.error && <p class="muted">Loading…</p>}
      </section>
    );
  }
  const data = page.data.briefing;
  const links: TaskPageLinks | null = page.data.links;
  const { task } = data;
  const field = (spec: FieldSpec) => (
    <InlineField key={spec.name} task={task} spec={spec} editable={editable} refresh={refresh} after={after} />
  );
  const row = (label: string, content: ComponentChildren) => (
    <>
      <dt>{label}</dt>
      <dd>{content}</dd>
    </>
  );
  const metadataKeys = Object.keys(task.metadata ?? {});
  return (
    <section data-view="task" class="view" data-task-id={task.id}>
      <div class="toolbar task-head">
        <InlineField task={task} spec={TITLE} editable={editable} refresh={refresh} after={after} heading />
        {task.blocked && <span class="badge blocked">blocked</span>}
        <code class="muted">{task.id}</code>
        <FollowButton taskId={task.id} />
      </div>
      <ErrorAlert error={page.error} onReload={page.reload} />
      <div class="detail">
        <div>
          <Section title="Context" count={data.context_all?.length ?? 0}>
            <Timeline entries={data.context_all ?? []} />
            {editable && <AddContext taskId={task.id} after={after} />}
          </Section>
          <Section title="Intent, description and plan">
            <dl class="fields long">
              {row(
                "Intent",
                intentFixed(task) ? (
                  <ReadOnlyField name="intent" why="Fixed once set: record a change of direction as a decision.">
                    <pre>{task.intent}</pre>
                  </ReadOnlyField>
                ) : (
                  field(longText("intent", "Intent"))
                ),
              )}
              {row("Description", field(longText("description", "Description")))}
              {row("Plan", field(longText("plan", "Plan")))}
            </dl>
          </Section>
          <Section title="Metadata" count={metadataKeys.length}>
            {metadataKeys.length === 0 && <p class="muted">none</p>}
            <dl class="fields metadata">
              {metadataKeys.map((key) => (
                <>
                  <dt key={`k-${key}`}>{key}</dt>
                  <dd key={`v-${key}`}>{field(metadataField(key))}</dd>
                </>
              ))}
            </dl>
            {editable && <AddMetadata task={task} after={after} />}
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
          <Section title="Fields">
            <dl class="fields" aria-label="Fields">
              {SHORT_FIELDS.map((spec) => row(spec.label, field(spec)))}
              {/* Set by the store or by agents, never by a person here: shown as text. */}
              {row("List", <ReadOnlyField name="list_id">{task.list_id}</ReadOnlyField>)}
              {row(
                "Active form",
                <ReadOnlyField name="active_form">{task.active_form ?? <span class="muted">none</span>}</ReadOnlyField>,
              )}
              {row("Version", <ReadOnlyField name="version">{String(task.version)}</ReadOnlyField>)}
              {row(
                "Created",
                <ReadOnlyField name="created_at">
                  <When at={task.created_at} />
                </ReadOnlyField>,
              )}
              {row(
                "Updated",
                <ReadOnlyField name="updated_at">
                  <When at={task.updated_at} />
                </ReadOnlyField>,
              )}
            </dl>
          </Section>
          <Section title="Claim and file reservations" count={page.data.reservations.length}>
            <p class="claim-line">
              <ClaimControl task={task} editable={editable} after={after} />
            </p>
            <TaskReservations task={task} rows={page.data.reservations} editable={editable} after={after} />
          </Section>
          <Section title="Progress" count={data.progress?.length ?? 0}>
            <ProgressList taskId={task.id} items={data.progress ?? []} editable={editable} after={after} />
          </Section>
          <Section title="Relationships">
            <dl class="fields">
              {row(
                "Parent",
                <InlineField
                  task={task}
                  spec={{ ...PARENT, show: () => <TaskRefs tasks={data.parent ? [data.parent] : []} /> }}
                  editable={editable}
                  refresh={refresh}
                  after={after}
                />,
              )}
              {row("Children", <TaskRefs tasks={data.children} />)}
              {row(
                "Blocked by",
                <InlineField
                  task={task}
                  spec={{ ...BLOCKED_BY, show: () => <TaskRefs tasks={data.blocked_by} /> }}
                  editable={editable}
                  refresh={refresh}
                  after={after}
                />,
              )}
              {row("Blocking", <TaskRefs tasks={data.blocking} />)}
              {row(
                "Other links",
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
                </ul>,
              )}
            </dl>
          </Section>
          <Section title="Files" count={data.files?.length ?? 0}>
            {links && (
              <p class="muted small">
                Linked to <a href={links.repository}>{links.repository.replace(/^https?:\/\//, "")}</a>
              </p>
            )}
            <ul class="plain-list files">
              {(data.files ?? []).map((file) => (
                <li key={file.file_path} data-file={file.file_path}>
                  <Linked href={links?.files[file.file_path]}>{file.file_path}</Linked>{" "}
                  <span class="muted small">{file.operations.join(", ")}</span>
                </li>
              ))}
            </ul>
          </Section>
          <Section title="Commits" count={data.commits?.length ?? 0}>
            <ul class="plain-list commits">
              {(data.commits ?? []).map((commit) => (
                <li key={commit.sha} data-sha={commit.sha}>
                  <Linked href={links?.commits[commit.sha]}>{commit.sha.slice(0, 10)}</Linked> {commit.subject}{" "}
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
