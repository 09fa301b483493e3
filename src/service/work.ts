import { DEFAULT_LEASE_SECONDS, leaseState } from "../domain/claims.js";
import { ArbeitError } from "../domain/errors.js";
import { isAbsolutePath, projectRelative } from "../domain/paths.js";
import { ARBEIT_DIR } from "../domain/project-layout.js";
import { type FileOperation, isTerminal, type Task, type Warning } from "../domain/types.js";
import { assertTransition } from "../domain/validation.js";
import { LIMITS } from "../schemas/limits.js";
import type { ActiveWork, StoreTx } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { alreadyClaimed, releaseClaim, sweepExpiredClaims, takeClaim } from "./claims.js";
import { assertVersion, requireTask, requireTaskToChange } from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";
import { blockersWarning } from "./tasks.js";
import { staleContextWarning } from "./warnings.js";

function requireSession(caller: Caller): string {
  if (!caller.session) {
    throw new ArbeitError("INVALID_ARGUMENT", "This call needs a session to link work to, and none was given.", {
      suggestions: ["Pass --session <id> or set ARBEIT_SESSION (CLI); hosts supply their own session id."],
    });
  }
  return caller.session;
}

/** The session's live active work; work on a task deleted since is treated as ended. */
async function liveActiveWork(tx: StoreTx, session: string): Promise<(ActiveWork & { task: Task }) | undefined> {
  const active = await tx.activeWork(session);
  if (active === undefined) return undefined;
  const task = await tx.getTask(active.task_id);
  return task ? { ...active, task } : undefined;
}

export async function startWork(
  deps: ServiceDeps,
  input: { task_id: string; expected_version?: number },
  caller: Caller,
): Promise<Result<{ task: Task; session_linked: boolean; session_id: string }>> {
  const session = requireSession(caller);
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    if (caller.agent) await sweepExpiredClaims(w);
    let task = await requireTaskToChange(tx, input.task_id);
    assertVersion(task, input.expected_version);
    const active = await liveActiveWork(tx, session);
    if (active && active.task_id !== task.id) {
      throw new ArbeitError(
        "ALREADY_WORKING",
        `Session ${session} is already working on ${active.task_id} (${active.task.title}).`,
        {
          details: { session_id: session, task_id: active.task_id },
          suggestions: [`Call arbeit_task_stop_work with task_id ${active.task_id} first, then start this task.`],
        },
      );
    }
    const warnings: Warning[] = [];
    if (task.blocked) warnings.push(blockersWarning(task));
    const stale = await staleContextWarning(tx, deps, task.id);
    if (stale) warnings.push(stale);
    if (active) return ok({ task, session_linked: false, session_id: session }, warnings);

    // Working on a task claims it: nobody else may hold it, and nobody else will take it.
    if (caller.agent && !isTerminal(task.status)) {
      const lease = leaseState(task, caller.agent, now);
      if (lease === "other") throw alreadyClaimed(task);
      if (lease === "free") task = await takeClaim(w, task, DEFAULT_LEASE_SECONDS);
    }
    const from = task.status;
    if (task.status === "open") {
      assertTransition(task.type, "in_progress", task);
      await tx.updateTask(task.id, { status: "in_progress" }, now);
      task = await requireTask(tx, task.id);
    }
    const link = await tx.linkSession({ task_id: task.id, session_id: session, agent: caller.agent, created_at: now });
    const stale_active = await tx.activeWork(session);
    if (stale_active) await tx.stopActiveWork(session, now);
    await tx.startActiveWork({ session_id: session, task_id: task.id, agent: caller.agent, started_at: now });
    await w.emit({
      event_type: "work_started",
      entity_type: "session_link",
      entity_id: link.id,
      task_id: task.id,
      payload: { session_id: session, status_from: from, status_to: task.status, version: task.version },
    });
    return ok({ task, session_linked: true, session_id: session }, warnings);
  });
}

export async function stopWork(
  deps: ServiceDeps,
  input: { task_id: string },
  caller: Caller,
): Promise<Result<{ stopped: boolean; files_tracked: number; claim_released: boolean }>> {
  const session = requireSession(caller);
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    const task = await requireTaskToChange(tx, input.task_id);
    const active = await tx.activeWork(session);
    if (!active || active.task_id !== task.id) return ok({ stopped: false, files_tracked: 0, claim_released: false });
    const files = await tx.countFiles(task.id, session, active.started_at);
    await tx.stopActiveWork(session, now);
    const link = await tx.linkSession({ task_id: task.id, session_id: session, agent: caller.agent, created_at: now });
    await w.emit({
      event_type: "work_stopped",
      entity_type: "session_link",
      entity_id: link.id,
      task_id: task.id,
      payload: { session_id: session, started_at: active.started_at, files_tracked: files },
    });
    // Stopping hands the task back: a claim held only to work on it would otherwise lock other
    // agents out until the lease ran out.
    const release = caller.agent !== null && task.owner === caller.agent;
    if (release) await releaseClaim(w, task.id, "work_stopped");
    return ok({ stopped: true, files_tracked: files, claim_released: release });
  });
}

/** What happened to a tracked read or write: recorded, or why not. */
export interface TrackResult {
  tracked: boolean;
  reason?: "no_active_work" | "outside_project" | "arbeit_data" | "already_tracked";
  task_id?: string;
  file_path?: string;
  operation?: FileOperation;
}

/**
 * Records that the session read or wrote a file. Only while the session has active
 * work, only inside the project; the same task/path/operation/session is recorded once.
 */
export async function trackFile(
  deps: ServiceDeps,
  input: { path: string; operation: FileOperation },
  caller: Caller,
): Promise<Result<TrackResult>> {
  const session = requireSession(caller);
  if (input.path.length > LIMITS.file_path) {
    throw new ArbeitError("FIELD_TOO_LARGE", `path is too large (limit ${LIMITS.file_path} characters).`, {
      details: { field: "path", limit: LIMITS.file_path },
    });
  }
  const absolute = isAbsolutePath(input.path) ? input.path : `${deps.projectRoot}/${input.path}`;
  let resolved: string;
  try {
    resolved = deps.realpath(absolute);
  } catch {
    resolved = absolute;
  }
  const relative = projectRelative(deps.projectRoot, resolved);
  if (relative === null) return ok({ tracked: false, reason: "outside_project" });
  // Arbeit's own database is not project work.
  if (relative === ARBEIT_DIR || relative.startsWith(`${ARBEIT_DIR}/`))
    return ok({ tracked: false, reason: "arbeit_data", file_path: relative });
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    const active = await liveActiveWork(tx, session);
    if (!active) return ok({ tracked: false, reason: "no_active_work", file_path: relative });
    const id = await tx.insertFileAssociation({
      task_id: active.task_id,
      file_path: relative,
      operation: input.operation,
      session_id: session,
      created_at: now,
    });
    if (id === undefined) return ok({ tracked: false, reason: "already_tracked", file_path: relative });
    await w.emit({
      event_type: "file_tracked",
      entity_type: "file_association",
      entity_id: id,
      task_id: active.task_id,
      payload: { file_path: relative, operation: input.operation },
    });
    return ok({
      tracked: true,
      task_id: active.task_id,
      file_path: relative,
      operation: input.operation,
    });
  });
}
