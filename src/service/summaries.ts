import type { FileAssociation, FileOperation, ProgressItem, Task, TaskSummary } from "../domain/types.js";

/** Listings leave out the heavy text fields; an agent fetches one task in full when it needs it. */
export function summarize(task: Task): TaskSummary {
  const { intent: _intent, description: _description, plan: _plan, ...summary } = task;
  return summary;
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
