import { leaseState } from "../domain/claims.js";
import { estimateTokens } from "../domain/token-budget.js";
import { DEFAULT_PRIORITY, type Task, type TaskSummary } from "../domain/types.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import { type Caller, identify } from "../service/caller.js";
import type { ResumePacket } from "../service/resume.js";
import type { NewsOptions } from "../service/session-news.js";
import { activeBriefingText, briefingOf, KEEP_CURRENT, readBriefing } from "./briefing-text.js";
import { oneLine } from "./text.js";

const READY_SHOWN = 5;
const IN_PROGRESS_SHOWN = 3;
/**
 * What the session-start context may cost the model, in the resume packet's estimate (about
 * three characters a token): the task briefing comes first, then memory and the changes since
 * the session last looked, oldest dropped first.
 */
export const SESSION_START_TOKENS = 2_000;
const LINE_CHARS = 240;

const line = (task: Pick<TaskSummary, "id" | "title" | "priority">) =>
  `- ${task.id} "${task.title}" (priority ${task.priority ?? DEFAULT_PRIORITY})`;
const clip = (text: string) => {
  const flat = oneLine(text);
  return flat.length <= LINE_CHARS ? flat : `${flat.slice(0, LINE_CHARS - 1)}…`;
};

async function listed(service: ArbeitService, caller: Caller, query: "ready", params: object) {
  const { data } = await service.query({ query, params: params as Record<string, unknown> }, caller);
  return (data as { tasks: TaskSummary[]; has_more: boolean }).tasks;
}

/**
 * The tasks in progress, split by who may resume them at the database's time: free ones (no live
 * claim) and the session's own, and those another session holds, with their holder's name.
 */
async function inProgress(service: ArbeitService, caller: Caller) {
  const session = identify(caller).session;
  return service.store.read(async (tx) => {
    const now = tx.databaseNow();
    const tasks = await tx.listTasks({
      statuses: ["in_progress"],
      list_id: caller.list_id,
      // Enough to fill both lists when one kind crowds the first page.
      limit: IN_PROGRESS_SHOWN * 2,
      offset: 0,
    });
    const held = (task: Task) => leaseState(task, session, now) === "other";
    return {
      resumable: tasks.filter((task) => !held(task)).slice(0, IN_PROGRESS_SHOWN),
      held: tasks.filter(held).slice(0, IN_PROGRESS_SHOWN),
    };
  });
}

/** Who holds a task another session claimed: its agent, and whether that is the caller's own name. */
function heldLine(task: Task, caller: Caller): string {
  const holder = task.owner ?? task.claim_session ?? "another session";
  const same = caller.agent !== null && task.owner === caller.agent ? " in another session" : "";
  return `${line(task)}, held by ${holder}${same} until ${task.lease_expires_at}`;
}

/**
 * A short note of the work waiting, for a session that has no task of its own yet. Only tasks the
 * session may take are offered to resume: one another session holds is named with its holder, so
 * the agent leaves it alone (or asks) instead of starting on a teammate's task.
 */
async function readyNote(service: ArbeitService, caller: Caller): Promise<string> {
  // Asked together (one round trip on Postgres).
  const [ready, active] = await Promise.all([
    listed(service, caller, "ready", { limit: READY_SHOWN }),
    inProgress(service, caller),
  ]);
  const out = ["Arbeit task memory is set up in this project (arbeit_* tools)."];
  if (active.resumable.length > 0) {
    out.push("In progress (resume with arbeit_task_start_work):", ...active.resumable.map(line));
  }
  if (active.held.length > 0) {
    out.push(
      "In progress, held by others (not yours to resume):",
      ...active.held.map((task) => heldLine(task, caller)),
    );
  }
  if (ready.length > 0) out.push("Ready to start:", ...ready.map(line));
  const none = active.resumable.length === 0 && active.held.length === 0;
  if (none && ready.length === 0) out.push("No open tasks: plan new work with arbeit_task_create.");
  return out.join("\n");
}

/**
 * The task part of a session's start: the briefing of the task it is working on (for a sub-agent
 * without work of its own, that of the nearest of `caller.parents` with some), else of the task it
 * last worked on (if still unfinished), else a short note of the work waiting.
 */
export async function sessionTaskText(service: ArbeitService, caller: Caller): Promise<string> {
  const session = caller.session;
  if (session) {
    // The session's task is asked once: the task it works on, else the one it last worked on.
    const own = service.sessionTask(session);
    own.catch(() => {});
    const active = await activeBriefingText(service, session, caller.parents ?? [], own);
    if (active) return active;
    const last = await lastWorkedOnText(service, session, own);
    if (last) return last;
  }
  return readyNote(service, caller);
}

/** The briefing of the task the session last worked on, with the call that resumes it, while it is unfinished. */
export async function lastWorkedOnText(
  service: ArbeitService,
  session: string,
  /** The session's task (ArbeitService.sessionTask), when the caller has asked for it already. */
  asked: ReturnType<ArbeitService["sessionTask"]> = service.sessionTask(session),
): Promise<string | undefined> {
  const last = await asked;
  if (!last) return undefined;
  // The task is read with its briefing's sections, and told only while unfinished.
  const briefing = await readBriefing(service, last.task_id);
  const { task } = briefing;
  if (task.status !== "open" && task.status !== "in_progress") return undefined;
  const text = briefingOf(briefing, "Arbeit: this session last worked on");
  return `${text}\nResume it with arbeit_task_start_work {"task_id": "${task.id}"}. ${KEEP_CURRENT}`;
}

const memoryLines = (packet: ResumePacket) =>
  packet.memory.map((entry) => `- ${entry.key} (${entry.scope}): ${clip(JSON.stringify(entry.value))}`);

/**
 * What a Claude Code session learns at start-up, its resume as text: the briefing of the task it
 * works on (else last worked on, else the work waiting), the memory that applies (arbeit_resume's,
 * read without moving anything), and what others changed on its task since it last looked (the
 * news UserPromptSubmit also tells, which moves the session's cursor past it).
 */
export async function sessionStartContext(
  service: ArbeitService,
  caller: Caller,
  options: {
    advanceNews?: NewsOptions["advance"];
    /** The session's news, when the caller has asked for it already (advanceNews then does not apply). */
    news?: ReturnType<ArbeitService["sessionNews"]>;
  } = {},
): Promise<{ text: string; seq: number }> {
  // Three reads that do not depend on each other, asked side by side: in a hook's one transaction
  // their statements travel together. Each is awaited before a failure is thrown.
  const asked = [
    service.resume({ max_tokens: SESSION_START_TOKENS, peek: true }, caller),
    sessionTaskText(service, caller),
    options.news ?? service.sessionNews(caller, { advance: options.advanceNews ?? true }),
  ] as const;
  const settled = await Promise.allSettled(asked);
  for (const answer of settled) if (answer.status === "rejected") throw answer.reason;
  const [{ data: packet }, head, { data: found }] = await Promise.all(asked);
  const memory = memoryLines(packet);
  const { news, seq } = found;
  const changes = news.map((item) => `- ${item.text}`);
  const render = () =>
    [
      head,
      ...(memory.length > 0 ? ["Memory:", ...memory] : []),
      ...(changes.length > 0 ? ["Changed since this session last looked:", ...changes] : []),
    ].join("\n");
  while (estimateTokens(render()) > SESSION_START_TOKENS && changes.length > 0) changes.shift();
  while (estimateTokens(render()) > SESSION_START_TOKENS && memory.length > 0) memory.pop();
  // `seq`: the newest event this text covers, so a host that keeps its own place tells news after it.
  return { text: render(), seq };
}
