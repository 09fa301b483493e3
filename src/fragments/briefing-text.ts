import type { ArbeitService } from "../service/arbeit-service.js";
import type { Briefing } from "../service/briefing.js";
import { taskFragment } from "./task-fragment.js";

/**
 * The briefing a host injects into a model's context (OpenCode compaction, Claude Code session
 * start and pre-compact): taskFragment over the task's briefing, with every part bounded so a
 * long-lived task cannot flood the window.
 */

const FIELD_CHARS = 1_500;
const ENTRY_CHARS = 600;
const MAX_CONTEXT = 12;
const MAX_STEPS = 15;
const MAX_FILES = 20;

function clip(text: string | null, max: number): string | null {
  if (text === null) return null;
  const flat = text.trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** The same briefing with long text clipped and long lists cut to their newest or first items. */
export function boundBriefing(briefing: Briefing): { briefing: Briefing; notes: string[] } {
  const { task } = briefing;
  const notes: string[] = [];
  const context = briefing.context ?? [];
  if (context.length > MAX_CONTEXT) notes.push(`(latest ${MAX_CONTEXT} of ${context.length} context entries shown)`);
  const files = briefing.files ?? [];
  if (files.length > MAX_FILES) notes.push(`(${files.length - MAX_FILES} more files not shown)`);
  const progress = briefing.progress_summary;
  if (progress && progress.remaining_items.length > MAX_STEPS) {
    notes.push(`(${progress.remaining_items.length - MAX_STEPS} more remaining steps not shown)`);
  }
  return {
    briefing: {
      ...briefing,
      task: {
        ...task,
        intent: clip(task.intent, FIELD_CHARS),
        description: clip(task.description, FIELD_CHARS),
        plan: clip(task.plan, FIELD_CHARS),
      },
      ...(briefing.context && {
        context: context.slice(-MAX_CONTEXT).map((entry) => ({ ...entry, content: clip(entry.content, ENTRY_CHARS)! })),
      }),
      ...(briefing.files && { files: files.slice(0, MAX_FILES) }),
      ...(progress && {
        progress_summary: { ...progress, remaining_items: progress.remaining_items.slice(0, MAX_STEPS) },
      }),
    },
    notes,
  };
}

/** The task and the sections a host's briefing shows. */
export async function readBriefing(service: ArbeitService, taskId: string): Promise<Briefing> {
  return (await service.getTask({ task_id: taskId, include: ["context", "progress_summary", "files"] })).data;
}

/** A briefing (readBriefing's) under a heading that says how the task relates to the session. */
export function briefingOf(data: Briefing, heading: string): string {
  const { briefing, notes } = boundBriefing(data);
  return [`${heading}:`, taskFragment(briefing), ...notes].join("\n");
}

/** The task's briefing under a heading that says how it relates to the session. */
export async function briefingText(service: ArbeitService, taskId: string, heading: string): Promise<string> {
  return briefingOf(await readBriefing(service, taskId), heading);
}

export const KEEP_CURRENT =
  "Keep it current: arbeit_context_add for decisions, attempts and outcomes; arbeit_progress_complete for finished steps.";

/**
 * The briefing of the session's active task, or undefined when it has none. A session without
 * work of its own (a sub-agent) is briefed on the work of the nearest of `parents` that has some.
 */
export async function activeBriefingText(
  service: ArbeitService,
  session: string,
  parents: readonly string[] = [],
  /** The session's own task (ArbeitService.sessionTask), when the caller has asked for it already. */
  own: ReturnType<ArbeitService["sessionTask"]> = service.sessionTask(session),
): Promise<string | undefined> {
  // Every session is asked at once (one round trip on Postgres); the first that works wins.
  const asked = [own, ...parents.map((who) => service.sessionTask(who))];
  for (const task of asked) task.catch(() => {});
  for (const [i, task] of asked.entries()) {
    const current = await task;
    if (!current?.active) continue;
    const heading =
      i === 0 ? "Arbeit: this session is working on" : "Arbeit: the session that started this one is working on";
    const text = await briefingText(service, current.task_id, heading);
    return `${text}\n${KEEP_CURRENT}`;
  }
  return undefined;
}
