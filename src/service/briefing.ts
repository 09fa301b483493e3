import type {
  ArbeitEvent,
  ContextEntry,
  ProgressItem,
  SessionLink,
  Task,
  TaskSummary,
  Warning,
} from "../domain/types.js";
import type { RelationshipRow } from "../store/task-store.js";
import { commitsOf, type RecordedCommit } from "./commits.js";
import { requireTask } from "./invariants.js";
import { ok, type Result, type ServiceDeps } from "./operation.js";
import { type FileSummary, type ProgressSummary, summarize, summarizeFiles, summarizeProgress } from "./summaries.js";
import { orphanWarning, staleContextWarning } from "./warnings.js";

/** The 13 briefing sections that arbeit_task_get can add to a task (docs/tools.md). */
export const INCLUDE_SECTIONS = [
  "relationships",
  "context",
  "context_all",
  "progress",
  "progress_summary",
  "parent",
  "children",
  "blocked_by",
  "blocking",
  "files",
  "sessions",
  "recent_events",
  "commits",
] as const;
export type IncludeSection = (typeof INCLUDE_SECTIONS)[number];

export const RECENT_EVENTS_LIMIT = 20;

export interface Briefing {
  task: Task;
  relationships?: RelationshipRow[];
  context?: ContextEntry[];
  context_all?: ContextEntry[];
  progress?: ProgressItem[];
  progress_summary?: ProgressSummary;
  parent?: TaskSummary | null;
  children?: TaskSummary[];
  blocked_by?: TaskSummary[];
  blocking?: TaskSummary[];
  files?: FileSummary[];
  sessions?: SessionLink[];
  recent_events?: ArbeitEvent[];
  commits?: RecordedCommit[];
}

export async function getTask(
  deps: ServiceDeps,
  input: { task_id: string; include?: IncludeSection[] },
): Promise<Result<Briefing>> {
  const include = new Set(input.include ?? []);
  return deps.store.read(async (tx) => {
    const id = input.task_id;
    // Every read below needs only the id: they are all sent at once (one round trip on Postgres),
    // and the parent, which needs the task, follows.
    const read = <T>(wanted: boolean, start: () => Promise<T>): Promise<T> | undefined => {
      if (!wanted) return undefined;
      const started = start();
      started.catch(() => {});
      return started;
    };
    const taskRead = read(true, () => requireTask(tx, id))!;
    // Orphans are reported wherever relationships are read, whether or not they were asked for.
    const relationshipsRead = read(true, () => tx.relationshipsOf(id))!;
    const staleRead = read(true, () => staleContextWarning(tx, deps, id))!;
    const contextRead = read(include.has("context"), () => tx.contextOf(id, false));
    const contextAllRead = read(include.has("context_all"), () => tx.contextOf(id, true));
    const progressRead = read(include.has("progress") || include.has("progress_summary"), () => tx.progressOf(id));
    const childrenRead = read(include.has("children"), () => tx.children(id));
    const blockedByRead = read(include.has("blocked_by"), () => tx.blockers(id));
    const blockingRead = read(include.has("blocking"), () => tx.blocking(id));
    const filesRead = read(include.has("files"), () => tx.filesOf(id));
    const sessionsRead = read(include.has("sessions"), () => tx.sessionsOf(id));
    const eventsRead = read(include.has("recent_events"), () => tx.recentEvents(id, RECENT_EVENTS_LIMIT));
    const commitsRead = read(include.has("commits"), () => commitsOf(tx, id));
    // In a write it joined (SessionStart's), the transaction may commit beside these reads: a
    // task not found is then reported with the hook's other writes kept, which only a deletion
    // between two of the hook's statements can cause (the hook read the task's id a wave before).
    tx.finalWave();

    const task = await taskRead;
    const briefing: Briefing = { task };
    const warnings: Warning[] = [];
    const relationships = await relationshipsRead;
    const orphans = orphanWarning(task.id, relationships);
    if (orphans) warnings.push(orphans);
    const stale = await staleRead;
    if (stale) warnings.push(stale);

    if (include.has("relationships")) briefing.relationships = relationships;
    if (contextRead) briefing.context = await contextRead;
    if (contextAllRead) briefing.context_all = await contextAllRead;
    if (progressRead) {
      const items = await progressRead;
      if (include.has("progress")) briefing.progress = items;
      if (include.has("progress_summary")) briefing.progress_summary = summarizeProgress(items);
    }
    if (include.has("parent")) {
      const parent = task.parent_id ? await tx.getTask(task.parent_id) : undefined;
      briefing.parent = parent ? summarize(parent) : null;
    }
    if (childrenRead) briefing.children = (await childrenRead).map(summarize);
    if (blockedByRead) briefing.blocked_by = (await blockedByRead).map(summarize);
    if (blockingRead) briefing.blocking = (await blockingRead).map(summarize);
    if (filesRead) briefing.files = summarizeFiles(await filesRead);
    if (sessionsRead) briefing.sessions = await sessionsRead;
    if (eventsRead) briefing.recent_events = await eventsRead;
    if (commitsRead) briefing.commits = await commitsRead;
    return ok(briefing, warnings);
  });
}
