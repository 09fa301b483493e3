import type { TaskSummary } from "../domain/types.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";
import { activeBriefingText, briefingText, KEEP_CURRENT } from "./briefing-text.js";

const READY_SHOWN = 5;
const IN_PROGRESS_SHOWN = 3;

const line = (task: TaskSummary) => `- ${task.id} "${task.title}" (priority ${task.priority})`;

async function listed(service: ArbeitService, caller: Caller, query: "ready" | "tasks", params: object) {
  const { data } = await service.query({ query, params: params as Record<string, unknown> }, caller);
  return (data as { tasks: TaskSummary[]; has_more: boolean }).tasks;
}

/** A short note of the work waiting, for a session that has no task of its own yet. */
async function readyNote(service: ArbeitService, caller: Caller): Promise<string> {
  const ready = await listed(service, caller, "ready", { limit: READY_SHOWN });
  const active = await listed(service, caller, "tasks", { status: "in_progress", limit: IN_PROGRESS_SHOWN });
  const out = ["Arbeit task memory is set up in this project (arbeit_* tools)."];
  if (active.length > 0) out.push("In progress (resume with arbeit_task_start_work):", ...active.map(line));
  if (ready.length > 0) out.push("Ready to start:", ...ready.map(line));
  if (active.length === 0 && ready.length === 0) out.push("No open tasks: plan new work with arbeit_task_create.");
  return out.join("\n");
}

/**
 * What a session learns at its start (Claude Code's SessionStart hook, the system prompt of an
 * OpenCode session's first step): the briefing of the task it is working on (for a sub-agent
 * without work of its own, that of the nearest of `caller.parents` with some), else of the task it
 * last worked on (if still unfinished), else a short note of the work waiting.
 */
export async function sessionStartContext(service: ArbeitService, caller: Caller): Promise<string> {
  const session = caller.session;
  if (session) {
    const active = await activeBriefingText(service, session, caller.parents ?? []);
    if (active) return active;
    const last = await service.sessionTask(session);
    const task = last ? (await service.getTask({ task_id: last.task_id })).data.task : undefined;
    if (task && (task.status === "open" || task.status === "in_progress")) {
      const text = await briefingText(service, task.id, "Arbeit: this session last worked on");
      return `${text}\nResume it with arbeit_task_start_work {"task_id": "${task.id}"}. ${KEEP_CURRENT}`;
    }
  }
  return readyNote(service, caller);
}
