import { DEFAULT_LEASE_SECONDS, leaseState } from "../domain/claims.js";
import { ArbeitError } from "../domain/errors.js";
import { ARBEIT_DIR } from "../domain/project-layout.js";
import { type FileOperation, isTerminal, type Task, type Warning } from "../domain/types.js";
import { assertTransition } from "../domain/validation.js";
import { LIMITS } from "../schemas/limits.js";
import type { ActiveWork, StoreTx } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import {
  assertNotFenced,
  assertNotHeldByOther,
  onlyClaimMoved,
  releaseClaim,
  sweepExpiredClaims,
  takeClaim,
} from "./claims.js";
import { plannedFiles } from "./file-overlap.js";
import { assertVersion, requireTask, requireTaskToChange } from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps, type WriteContext } from "./operation.js";
import { projectPath } from "./project-path.js";
import { type ReservationView, releaseReservationsOf, reserveFiles } from "./reservations.js";
import { blockersWarning, staleContextWarning } from "./warnings.js";

/** The session's live active work; work on a task deleted since is treated as ended. */
export async function liveActiveWork(tx: StoreTx, session: string): Promise<(ActiveWork & { task: Task }) | undefined> {
  // Sent together: one round trip on Postgres.
  const activeRead = tx.activeWork(session);
  const taskRead = tx.activeTaskOf(session);
  taskRead.catch(() => {});
  const active = await activeRead;
  if (active === undefined) return undefined;
  // A writer that switched the session's work between the two reads: read the task it named.
  const read = await taskRead;
  const task = read?.id === active.task_id ? read : await tx.getTask(active.task_id);
  return task ? { ...active, task } : undefined;
}

export async function startWork(
  deps: ServiceDeps,
  input: { task_id: string; expected_version?: number | undefined; reserve?: boolean | undefined },
  caller: Caller,
): Promise<Result<{ task: Task; session_linked: boolean; session_id: string; reserved?: ReservationView[] }>> {
  return mutate(deps, caller, async (w) => {
    const { tx, now, session } = w;
    await sweepExpiredClaims(w);
    let task = await requireTaskToChange(tx, input.task_id);
    assertVersion(task, input.expected_version);
    // Checked on every call, also when this session already works on the task: a claim another
    // session took since (after a forced release) is theirs.
    if (!isTerminal(task.status)) assertNotHeldByOther(w, task);
    const active = await liveActiveWork(tx, session);
    if (active && active.task_id !== task.id) {
      throw new ArbeitError(
        "ALREADY_WORKING",
        `Session ${session} is already working on ${active.task_id} (${active.task.title}).`,
        {
          details: { session_id: session, task_id: active.task_id },
          suggestions: [`Call arbeit_task_stop_work {task_id: "${active.task_id}"} first, then start this task.`],
        },
      );
    }
    const warnings: Warning[] = [];
    const blockers = await blockersWarning(tx, task);
    if (blockers) warnings.push(blockers);
    const stale = await staleContextWarning(tx, deps, task.id);
    if (stale) warnings.push(stale);
    // Working on a task claims it: nobody else will take it while this session works.
    if (!isTerminal(task.status) && leaseState(task, session, w.databaseNow) === "free") {
      task = await takeClaim(w, task, DEFAULT_LEASE_SECONDS);
    }
    await tx.setFocus(session, caller.agent, task.id, now);
    w.touched(task.id);
    // Asked to: the files the task wrote or its plan names, reserved for it exclusively (all or
    // nothing: FILE_RESERVED, and no work started, when another session holds one).
    const files = input.reserve ? ((await plannedFiles(tx, [task], w.databaseNow)).get(task.id) ?? []) : [];
    const reserved =
      files.length > 0 ? { reserved: (await reserveFiles(w, { paths: files, task_id: task.id })).reserved } : {};
    if (active) return ok({ task, session_linked: false, session_id: session, ...reserved }, warnings);

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
    return ok({ task, session_linked: true, session_id: session, ...reserved }, warnings);
  });
}

export async function stopWork(
  deps: ServiceDeps,
  input: { task_id: string },
  caller: Caller,
): Promise<Result<{ stopped: boolean; files_tracked: number; claim_released: boolean }>> {
  return mutate(deps, caller, async (w) => {
    const { tx, now, session } = w;
    const task = await requireTaskToChange(tx, input.task_id);
    const active = await tx.activeWork(session);
    if (!active || active.task_id !== task.id) {
      // A session that only claimed the task, and whose claim moved, lets go of it here: it is
      // fenced no more, one more collaborator on a task another session holds.
      if (!(await onlyClaimMoved(w, task))) return ok({ stopped: false, files_tracked: 0, claim_released: false });
      await recordWorkStopped(w, task.id, session, caller.agent, { files_tracked: 0, reason: "claim moved" });
      await releaseReservationsOf(w, task.id, "work_stopped", session);
      return ok({ stopped: true, files_tracked: 0, claim_released: false });
    }
    const files = await tx.countFiles(task.id, session, active.started_at);
    await tx.stopActiveWork(session, now);
    await recordWorkStopped(w, task.id, session, caller.agent, { started_at: active.started_at, files_tracked: files });
    // Stopping hands the task back: a claim held only to work on it would otherwise lock other
    // sessions out until the lease ran out.
    const release = leaseState(task, session, w.databaseNow) === "mine";
    if (release) await releaseClaim(w, task, "work_stopped");
    await releaseReservationsOf(w, task.id, "work_stopped", session);
    return ok({ stopped: true, files_tracked: files, claim_released: release });
  });
}

/** Logs that `session` stopped work on the task (its session link, made if missing, is the entity). */
async function recordWorkStopped(
  w: WriteContext,
  taskId: string,
  session: string,
  agent: string | null,
  details: { started_at?: string; files_tracked: number; reason?: string },
): Promise<void> {
  const link = await w.tx.linkSession({ task_id: taskId, session_id: session, agent, created_at: w.now });
  await w.emit({
    event_type: "work_stopped",
    entity_type: "session_link",
    entity_id: link.id,
    task_id: taskId,
    payload: { session_id: session, ...details },
  });
}

/**
 * Completing or cancelling a task ends every session's work on it and releases its claim, so
 * those sessions are free to start other work at once.
 */
export async function finishWorkOn(w: WriteContext, task: Task): Promise<void> {
  const { tx, now } = w;
  for (const work of await tx.workingOn(task.id)) {
    await recordWorkStopped(w, task.id, work.session_id, work.agent, {
      started_at: work.started_at,
      files_tracked: await tx.countFiles(task.id, work.session_id, work.started_at),
      reason: `task ${task.status}`,
    });
  }
  await tx.stopWorkOn(task.id, now);
  if (task.claim_session !== null || task.lease_expires_at !== null) await releaseClaim(w, task, "task_finished");
  await releaseReservationsOf(w, task.id, "task_finished");
}

/**
 * The work a session's activity counts towards: its own, else (a sub-agent without work of its
 * own works for the session that started it) the nearest parent's.
 */
export async function workingFor(
  tx: StoreTx,
  session: string,
  parents: readonly string[] = [],
): Promise<(ActiveWork & { task: Task }) | undefined> {
  // Asked of every session at once (one round trip on Postgres); the first that works wins.
  const asked = [session, ...parents].map((who) => {
    const active = liveActiveWork(tx, who);
    active.catch(() => {});
    return active;
  });
  for (const answer of asked) {
    const active = await answer;
    if (active) return active;
  }
  return undefined;
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
  if (input.path.length > LIMITS.file_path) {
    throw new ArbeitError("FIELD_TOO_LARGE", `path is too large (limit ${LIMITS.file_path} characters).`, {
      details: { field: "path", limit: LIMITS.file_path },
    });
  }
  const relative = projectPath(deps, input.path);
  if (relative === null) return ok({ tracked: false, reason: "outside_project" });
  // Arbeit's own database is not project work.
  if (relative === ARBEIT_DIR || relative.startsWith(`${ARBEIT_DIR}/`))
    return ok({ tracked: false, reason: "arbeit_data", file_path: relative });
  return mutate(deps, caller, async (w) => {
    const { tx, now, session } = w;
    // Whether the file is recorded already is asked beside the session's work, keyed by the
    // session's own work: it holds when that is the work found.
    const seenRead = tx.activeFileSeen(session, relative, input.operation);
    seenRead.catch(() => {});
    const active = await workingFor(tx, session, caller.parents);
    if (!active) return ok({ tracked: false, reason: "no_active_work", file_path: relative });
    if (active.session_id === session) await assertNotFenced(w, active.task);
    w.touched(active.task_id, active.session_id);
    const speculated = await seenRead;
    const id = await tx.insertFileAssociation(
      {
        task_id: active.task_id,
        file_path: relative,
        operation: input.operation,
        session_id: session,
        created_at: now,
      },
      speculated?.task_id === active.task_id ? speculated.seen : undefined,
    );
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
