import { DEFAULT_LEASE_SECONDS, leaseState, leaseUntil } from "../domain/claims.js";
import { ArbeitError } from "../domain/errors.js";
import { isTerminal, type Task, type Warning } from "../domain/types.js";
import type { StoreTx } from "../store/task-store.js";
import type { Caller } from "./caller.js";
import { emit, ok, type Result, type ServiceDeps } from "./deps.js";
import { assertVersion, requireTask } from "./graph-rules.js";
import { blockersWarning } from "./tasks.js";

export interface ClaimInput {
  action?: "claim" | "renew" | "release";
  task_id?: string;
  next?: boolean;
  lease_seconds?: number;
  list_id?: string;
  expected_version?: number;
}

export type ClaimResult =
  | { claimed: true; task: Task; lease_expires_at: string; renewed: boolean }
  | { claimed: false; task: null; reason: string }
  | { released: boolean; task: Task };

export function requireAgent(caller: Caller): string {
  if (!caller.agent) {
    throw new ArbeitError("INVALID_ARGUMENT", "Claims need an agent identity, and none was given.", {
      suggestions: ["Pass --agent <name> or set ARBEIT_AGENT (CLI); hosts supply the agent name."],
    });
  }
  return caller.agent;
}

/** Frees every lease that ran out, recording each as claim_expired (DESIGN §5). */
export async function sweepExpiredClaims(tx: StoreTx, deps: ServiceDeps, caller: Caller): Promise<void> {
  const now = deps.now();
  for (const expired of await tx.expiredClaims(now)) {
    await tx.clearClaim(expired.id, now);
    await emit(
      tx,
      deps,
      caller,
      {
        event_type: "claim_expired",
        entity_type: "task",
        entity_id: expired.id,
        task_id: expired.id,
        payload: { owner: expired.owner, lease_expires_at: expired.lease_expires_at },
      },
      now,
    );
  }
}

export function alreadyClaimed(task: Task): ArbeitError {
  return new ArbeitError("ALREADY_CLAIMED", `${task.id} is claimed by ${task.owner} until ${task.lease_expires_at}.`, {
    details: { task_id: task.id, owner: task.owner, lease_expires_at: task.lease_expires_at },
  });
}

/** Takes (or extends) the caller's lease on `task`; the caller has checked it is not held by another. */
export async function takeClaim(
  tx: StoreTx,
  deps: ServiceDeps,
  caller: Caller,
  task: Task,
  leaseSeconds: number,
): Promise<Task> {
  const agent = requireAgent(caller);
  const now = deps.now();
  const renewing = leaseState(task, agent, now) === "mine";
  const lease_expires_at = leaseUntil(deps.nowDate(), leaseSeconds);
  await tx.setClaim(task.id, { owner: agent, lease_expires_at, claimed_at: renewing ? null : now }, now);
  await emit(
    tx,
    deps,
    caller,
    {
      event_type: renewing ? "claim_renewed" : "task_claimed",
      entity_type: "task",
      entity_id: task.id,
      task_id: task.id,
      payload: { owner: agent, lease_expires_at, previous_owner: task.owner },
    },
    now,
  );
  // The row was read in this same transaction and the claim changed only these fields: no need
  // to read it back (claims are the hot path of many agents sharing one store).
  return { ...task, owner: agent, lease_expires_at, version: task.version + 1, updated_at: now };
}

/** Gives the caller's claim on a task back, recording why. */
export async function releaseClaim(
  tx: StoreTx,
  deps: ServiceDeps,
  caller: Caller,
  taskId: string,
  reason: "released" | "work_stopped",
): Promise<void> {
  const now = deps.now();
  await tx.clearClaim(taskId, now);
  await emit(
    tx,
    deps,
    caller,
    {
      event_type: "claim_released",
      entity_type: "task",
      entity_id: taskId,
      task_id: taskId,
      payload: { owner: caller.agent, reason },
    },
    now,
  );
}

function claimWarnings(task: Task): Warning[] {
  return task.blocked ? [blockersWarning(task)] : [];
}

export async function claim(deps: ServiceDeps, input: ClaimInput, caller: Caller): Promise<Result<ClaimResult>> {
  const agent = requireAgent(caller);
  const action = input.action ?? "claim";
  if (input.next && action !== "claim")
    throw new ArbeitError("INVALID_ARGUMENT", `next: true only goes with action "claim".`);
  if (input.next && input.task_id) throw new ArbeitError("INVALID_ARGUMENT", "Give task_id or next: true, not both.");
  if (!input.next && !input.task_id)
    throw new ArbeitError("INVALID_ARGUMENT", "Name the task (task_id) or ask for the best ready one (next: true).");
  const leaseSeconds = input.lease_seconds ?? DEFAULT_LEASE_SECONDS;

  return deps.store.write(async (tx) => {
    await sweepExpiredClaims(tx, deps, caller);
    const now = deps.now();
    if (input.next) {
      const [best] = await tx.readyTasks({ list_id: input.list_id ?? caller.list_id, now, limit: 1, offset: 0 });
      if (!best)
        return ok({
          claimed: false,
          task: null,
          reason: "No task is ready: every open task is blocked, claimed or finished.",
        });
      const task = await takeClaim(tx, deps, caller, best, leaseSeconds);
      return ok({ claimed: true, task, lease_expires_at: task.lease_expires_at!, renewed: false });
    }

    const task = await requireTask(tx, input.task_id!);
    assertVersion(task, input.expected_version);
    const state = leaseState(task, agent, now);
    if (action === "release") {
      if (state === "other") throw alreadyClaimed(task);
      if (task.owner !== agent) return ok({ released: false, task });
      await releaseClaim(tx, deps, caller, task.id, "released");
      return ok({ released: true, task: await requireTask(tx, task.id) });
    }
    if (state === "other") throw alreadyClaimed(task);
    if (isTerminal(task.status)) {
      throw new ArbeitError(
        "INVALID_STATUS",
        `${task.id} is ${task.status}; only open or in-progress tasks can be claimed.`,
        {
          details: { task_id: task.id, status: task.status },
        },
      );
    }
    const claimed = await takeClaim(tx, deps, caller, task, leaseSeconds);
    return ok(
      { claimed: true, task: claimed, lease_expires_at: claimed.lease_expires_at!, renewed: state === "mine" },
      claimWarnings(claimed),
    );
  });
}
