import {
  DEFAULT_LIST_ID,
  DEFAULT_PRIORITY,
  type FileAssociation,
  type FileOperation,
  type ProgressItem,
  type Task,
  type TaskSummary,
} from "../domain/types.js";

/** Every field of a task, by the name a query's `fields` asks for it. */
export const TASK_FIELDS = [
  "id",
  "list_id",
  "title",
  "type",
  "status",
  "intent",
  "description",
  "plan",
  "parent_id",
  "blocked_by",
  "blocked",
  "priority",
  "risk",
  "impact",
  "owner",
  "lease_expires_at",
  "claim_session",
  "active_form",
  "version",
  "created_at",
  "updated_at",
] as const satisfies ReadonlyArray<keyof Task>;
export type TaskField = (typeof TASK_FIELDS)[number];

export interface SummaryOptions {
  /** Fields to add as they are, even when null or at their default. */
  fields?: readonly TaskField[] | undefined;
  /** Leave out the status: the answer already says it (every ready task is open). */
  withoutStatus?: boolean;
}

/**
 * A task as listings show it (see TaskSummary): a long list is read on every turn that asks for
 * it, and each null or default field in it costs tokens and tells an agent nothing.
 */
export function summarize(task: Task): TaskSummary {
  return summarizeAs({})(task);
}

/** summarize, with fields added or the status left out. */
export function summarizeAs(options: SummaryOptions): (task: Task) => TaskSummary {
  return (task) => compact(task, options);
}

function compact(task: Task, options: SummaryOptions): TaskSummary {
  const out: TaskSummary = { id: task.id, title: task.title };
  if (!options.withoutStatus) out.status = task.status;
  if (task.type !== null) out.type = task.type;
  if (task.priority !== DEFAULT_PRIORITY) out.priority = task.priority;
  if (task.risk !== null) out.risk = task.risk;
  if (task.impact !== null) out.impact = task.impact;
  if (task.parent_id !== null) out.parent_id = task.parent_id;
  // Blockers matter while they block; once all are finished they are history (arbeit_task_get).
  if (task.blocked) {
    out.blocked = true;
    out.blocked_by = task.blocked_by;
  }
  if (task.owner !== null) out.owner = task.owner;
  if (task.lease_expires_at !== null) out.lease_expires_at = task.lease_expires_at;
  if (task.claim_session !== null) out.claim_session = task.claim_session;
  if (task.active_form !== null) out.active_form = task.active_form;
  if (task.list_id !== DEFAULT_LIST_ID) out.list_id = task.list_id;
  for (const field of options.fields ?? []) (out as unknown as Record<string, unknown>)[field] = task[field];
  return out;
}

export interface FileSummary {
  file_path: string;
  operations: FileOperation[];
  sessions: number;
  last_at: string;
}

/** One row per path, newest first: what an agent needs to know about the files a task touched. */
export function summarizeFiles(files: FileAssociation[]): FileSummary[] {
  const byPath = new Map<string, { ops: Set<FileOperation>; sessions: Set<string>; last: string }>();
  for (const file of files) {
    const entry = byPath.get(file.file_path) ?? { ops: new Set(), sessions: new Set(), last: "" };
    entry.ops.add(file.operation);
    entry.sessions.add(file.session_id);
    if (file.created_at > entry.last) entry.last = file.created_at;
    byPath.set(file.file_path, entry);
  }
  return [...byPath.entries()]
    .map(([file_path, entry]) => ({
      file_path,
      operations: [...entry.ops].sort(),
      sessions: entry.sessions.size,
      last_at: entry.last,
    }))
    .sort((a, b) =>
      a.last_at === b.last_at ? a.file_path.localeCompare(b.file_path) : b.last_at.localeCompare(a.last_at),
    );
}

export interface ProgressSummary {
  total: number;
  completed: number;
  remaining: number;
  percent: number;
  remaining_items: Array<Pick<ProgressItem, "id" | "content">>;
}

export function summarizeProgress(items: ProgressItem[]): ProgressSummary {
  const done = items.filter((item) => item.completed).length;
  return {
    total: items.length,
    completed: done,
    remaining: items.length - done,
    percent: items.length === 0 ? 0 : Math.round((done / items.length) * 100),
    remaining_items: items.filter((item) => !item.completed).map(({ id, content }) => ({ id, content })),
  };
}
