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
    const task = await requireTask(tx, input.task_id);
    const briefing: Briefing = { task };
    const warnings: Warning[] = [];
    // Orphans are reported wherever relationships are read, whether or not they were asked for.
    const relationships = await tx.relationshipsOf(task.id);
    const orphans = orphanWarning(task.id, relationships);
    if (orphans) warnings.push(orphans);
    const stale = await staleContextWarning(tx, deps, task.id);
    if (stale) warnings.push(stale);

    if (include.has("relationships")) briefing.relationships = relationships;
    if (include.has("context")) briefing.context = await tx.contextOf(task.id, false);
    if (include.has("context_all")) briefing.context_all = await tx.contextOf(task.id, true);
    if (include.has("progress") || include.has("progress_summary")) {
      const items = await tx.progressOf(task.id);
      if (include.has("progress")) briefing.progress = items;
      if (include.has("progress_summary")) briefing.progress_summary = summarizeProgress(items);
    }
    if (include.has("parent")) {
      const parent = task.parent_id ? await tx.getTask(task.parent_id) : undefined;
      briefing.parent = parent ? summarize(parent) : null;
    }
    if (include.has("children")) briefing.children = (await tx.children(task.id)).map(summarize);
    if (include.has("blocked_by")) briefing.blocked_by = (await tx.blockers(task.id)).map(summarize);
    if (include.has("blocking")) briefing.blocking = (await tx.blocking(task.id)).map(summarize);
    if (include.has("files")) briefing.files = summarizeFiles(await tx.filesOf(task.id));
    if (include.has("sessions")) briefing.sessions = await tx.sessionsOf(task.id);
    if (include.has("recent_events")) briefing.recent_events = await tx.recentEvents(task.id, RECENT_EVENTS_LIMIT);
    if (include.has("commits")) briefing.commits = await commitsOf(tx, task.id);
    return ok(briefing, warnings);
  });
}
