import { claimTakenFrom, DEFAULT_LEASE_SECONDS, leaseState, leaseUntil } from "../domain/claims.js";
import { ArbeitError } from "../domain/errors.js";
import { isTerminal, type Task } from "../domain/types.js";
import type { ClaimInput } from "../schemas/inputs.js";
import type { Caller } from "./caller.js";
import { othersWork, readyWithoutSharedFiles } from "./file-overlap.js";
import { assertVersion, requireTask, requireTaskToChange } from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps, type WriteContext } from "./operation.js";
import { type ReservationView, type ReserveResult, releaseFiles, reserveFiles, viewOf } from "./reservations.js";
import { blockersWarning } from "./warnings.js";
import { workingFor } from "./work.js";

export type { ClaimInput };

export type ClaimResult =
  | { claimed: true; task: Task; lease_expires_at: string; renewed: boolean }
  | { claimed: false; task: null; reason: string }
  | { released: boolean; forced?: boolean; task: Task }
  | { renewed: Array<{ task_id: string; lease_expires_at: string | null }>; reservations: ReservationView[] }
  | ReserveResult
  | { released: ReservationView[] };

/**
 * Frees every lease that ran out (on the database's clock), recording each as claim_expired;
 * returns how many it freed.
 */
export async function sweepExpiredClaims(w: WriteContext): Promise<number> {
  const { tx, now } = w;
  const expiredClaims = await tx.expiredClaims(w.databaseNow);
  for (const expired of expiredClaims) {
    await tx.clearClaim(expired.id, now);
    await w.emit({
      event_type: "claim_expired",
      entity_type: "task",
      entity_id: expired.id,
      task_id: expired.id,
      payload: { owner: expired.owner, session: expired.claim_session, lease_expires_at: expired.lease_expires_at },
    });
  }
  return expiredClaims.length;
}

const claimDetails = (task: Task) => ({
  task_id: task.id,
  owner: task.owner,
  lease_expires_at: task.lease_expires_at,
});

/** Another session holds the task: the error names the holder's agent and when its lease ends. */
export function alreadyClaimed(task: Task): ArbeitError {
  return new ArbeitError(
    "ALREADY_CLAIMED",
    `${task.id} is claimed by ${task.owner} (another session) until ${task.lease_expires_at}.`,
    {
      details: claimDetails(task),
      suggestions: [
        "Pick another task (arbeit_query ready), or wait for the lease to end.",
        "Do not release it yourself: breaking another session's claim is a person's decision (the dashboard shows stale claims).",
      ],
    },
  );
}

/** How far back a task's claim history is read to find a session's last word on its claim. */
const CLAIM_HISTORY_READ = 100;

/**
 * Fencing: a session whose claim on a task moved to another session (its own lease ran out, or a
 * person broke it, and the other took the task) writes nothing more to it, whether it started
 * work on the task or only claimed it, until it lets go (stops work on it); the refusal says to
 * whom the claim moved. `session`: the session whose claim counts (default the caller's).
 */
export async function assertNotFenced(w: WriteContext, task: Task, session = w.session): Promise<void> {
  if (leaseState(task, session, w.databaseNow) !== "other") return;
  // Asked together (one round trip on Postgres); only a task someone else holds gets here.
  const history = w.tx.claimHistory(task.id, CLAIM_HISTORY_READ);
  history.catch(() => {});
  const working = (await w.tx.activeWork(session))?.task_id === task.id;
  if (!working && !claimTakenFrom(await history, session)) return;
  throw claimMoved(task);
}

/** Whether the session only claimed `task` (no work started) and its claim moved to another session. */
export async function onlyClaimMoved(w: WriteContext, task: Task): Promise<boolean> {
  if (leaseState(task, w.session, w.databaseNow) !== "other") return false;
  return claimTakenFrom(await w.tx.claimHistory(task.id, CLAIM_HISTORY_READ), w.session);
}

function claimMoved(task: Task): ArbeitError {
  return new ArbeitError(
    "CLAIM_MOVED",
    `${task.id} is no longer this session's: its claim moved to ${task.owner} (another session, ${task.claim_session}), whose lease runs until ${task.lease_expires_at}. Nothing was written.`,
    {
      details: { ...claimDetails(task), session: task.claim_session },
      suggestions: [`Stop work on it (arbeit_task_stop_work {task_id: "${task.id}"}) and pick another task.`],
    },
  );
}

/** Refuses any change of a claim another session holds live. */
export function assertNotHeldByOther(w: WriteContext, task: Task): void {
  if (leaseState(task, w.session, w.databaseNow) === "other") throw alreadyClaimed(task);
}

/**
 * The one rule for every write that would change or end another session's live claim, or reshape
 * the task under it (a status, owner, title, parent or blockers change, a delete): refused with
 * ALREADY_CLAIMED unless `force`. Forcing breaks
 * the claim first, logged as a forced release naming the holder's session; the task is returned
 * as it is after that.
 */
export async function overrideOthersClaim(w: WriteContext, task: Task, force: boolean | undefined): Promise<Task> {
  if (leaseState(task, w.session, w.databaseNow) !== "other") return task;
  if (!force) throw alreadyClaimed(task);
  await releaseClaim(w, task, "forced");
  return {
    ...task,
    owner: null,
    claim_session: null,
    lease_expires_at: null,
    version: task.version + 1,
    updated_at: w.now,
  };
}

/** Takes (or extends) the session's lease on `task`; the caller has checked nobody else holds it. */
export async function takeClaim(w: WriteContext, task: Task, leaseSeconds: number): Promise<Task> {
  const { tx, now, session } = w;
  const owner = w.caller.agent ?? session;
  const renewing = leaseState(task, session, w.databaseNow) === "mine";
  const lease_expires_at = leaseUntil(new Date(w.databaseNow), leaseSeconds);
  await tx.setClaim(
    task.id,
    { owner, session, lease_expires_at, lease_seconds: leaseSeconds, claimed_at: renewing ? null : now },
    now,
  );
  await w.emit({
    event_type: renewing ? "claim_renewed" : "task_claimed",
    entity_type: "task",
    entity_id: task.id,
    task_id: task.id,
    payload: { owner, lease_expires_at, lease_seconds: leaseSeconds, previous_owner: task.owner },
  });
  // The row was read in this same transaction and the claim changed only these fields: no need
  // to read it back (claims are the hot path of many agents sharing one store).
  return { ...task, owner, claim_session: session, lease_expires_at, version: task.version + 1, updated_at: now };
}

export type ReleaseReason = "released" | "work_stopped" | "task_finished" | "forced";

/** Clears the task's claim, recording why and whose it was. */
export async function releaseClaim(w: WriteContext, task: Task, reason: ReleaseReason): Promise<void> {
  await w.tx.clearClaim(task.id, w.now);
  await w.emit({
    event_type: "claim_released",
    entity_type: "task",
    entity_id: task.id,
    task_id: task.id,
    payload: {
      owner: task.owner,
      reason,
      ...(reason === "forced" ? { session: task.claim_session, lease_expires_at: task.lease_expires_at } : {}),
    },
  });
}

export async function claim(deps: ServiceDeps, input: ClaimInput, caller: Caller): Promise<Result<ClaimResult>> {
  const action = input.action ?? "claim";
  if (input.next && action !== "claim")
    throw new ArbeitError("INVALID_ARGUMENT", `next: true only goes with action "claim".`);
  if (input.force && action !== "release")
    throw new ArbeitError(
      "INVALID_ARGUMENT",
      `force only goes with action "release", where a person breaks another session's claim; leave it out.`,
    );
  if (input.next && input.task_id) throw new ArbeitError("INVALID_ARGUMENT", "Give task_id or next: true, not both.");
  if (input.paths?.length === 0)
    throw new ArbeitError("INVALID_ARGUMENT", "paths names no file; give at least one path or glob, or leave it out.");
  if (input.paths) return claimFiles(deps, { ...input, paths: input.paths }, action, caller);
  if (input.shared !== undefined)
    throw new ArbeitError("INVALID_ARGUMENT", "shared only goes with paths (files to reserve); leave it out.");
  if (!input.next && !input.task_id && action === "renew") return renewAll(deps, caller);
  if (!input.next && !input.task_id)
    throw new ArbeitError("INVALID_ARGUMENT", "Name the task (task_id) or ask for the best ready one (next: true).");

  return mutate(deps, caller, async (w) => {
    const { tx } = w;
    const leaseSeconds = input.lease_seconds ?? DEFAULT_LEASE_SECONDS;
    // Not a task that shares files with work another session holds: that is no parallel work.
    const sessions = [w.session, ...(caller.parents ?? [])] as const;
    // Who else holds what, and whether any lease has run out, asked beside the best ready task.
    const others = input.next ? othersWork(tx, new Set(sessions), w.databaseNow) : undefined;
    others?.catch(() => {});
    const pick = () =>
      readyWithoutSharedFiles(
        tx,
        { list_id: input.list_id ?? caller.list_id, now: w.databaseNow, agent: caller.agent },
        sessions,
        1,
        undefined,
        [],
        others,
      );
    if (others) {
      // One round trip on Postgres: the best ready task (locked), others' work and their files,
      // and whether a lease ran out. Only then is there anything to sweep, and the best task is
      // asked again only when the sweep freed one, which may now be the best.
      const early = pick();
      early.catch(() => {});
      const freed = (await others).lapsed ? await sweepExpiredClaims(w) : 0;
      const [best] = freed > 0 ? await pick() : await early;
      if (!best)
        return ok({
          claimed: false,
          task: null,
          reason: "No task is ready: every open task is blocked, claimed or finished.",
        });
      const task = await takeClaim(w, best, leaseSeconds);
      return ok({ claimed: true, task, lease_expires_at: task.lease_expires_at!, renewed: false });
    }

    await sweepExpiredClaims(w);
    const task = await requireTaskToChange(tx, input.task_id!);
    assertVersion(task, input.expected_version);
    const state = leaseState(task, w.session, w.databaseNow);
    if (action === "release") {
      if (state === "other") {
        await overrideOthersClaim(w, task, input.force);
        return ok({ released: true, forced: true, task: await requireTask(tx, task.id) });
      }
      if (state !== "mine") return ok({ released: false, task });
      await releaseClaim(w, task, "released");
      return ok({ released: true, task: await requireTask(tx, task.id) });
    }
    if (state === "other") {
      await assertNotFenced(w, task);
      throw alreadyClaimed(task);
    }
    if (isTerminal(task.status)) {
      throw new ArbeitError(
        "INVALID_STATUS",
        `${task.id} is ${task.status}; only open or in-progress tasks can be claimed.`,
        {
          details: { task_id: task.id, status: task.status },
        },
      );
    }
    // Renewing keeps the lease length the claim was taken with unless a new one is given.
    const kept = state === "mine" && input.lease_seconds === undefined ? await tx.claimLeaseSeconds(task.id) : null;
    const claimed = await takeClaim(w, task, kept ?? leaseSeconds);
    return ok(
      { claimed: true, task: claimed, lease_expires_at: claimed.lease_expires_at!, renewed: state === "mine" },
      [await blockersWarning(tx, claimed)].filter((warning) => warning !== undefined),
    );
  });
}

/**
 * The explicit heartbeat, for a long stretch without writes: every live claim and file
 * reservation of the session runs its own lease length from now again. Nothing else changes and
 * nothing is logged, as with renewal by activity.
 */
async function renewAll(deps: ServiceDeps, caller: Caller): Promise<Result<ClaimResult>> {
  return mutate(deps, caller, async ({ tx, session, databaseNow }) => {
    const claims = await tx.claimsOf(session, databaseNow);
    for (const task of claims) tx.renewLease(task.id, session, databaseNow);
    await tx.renewReservations(session, databaseNow);
    const renewed = await tx.getTasks(claims.map((task) => task.id));
    return ok({
      renewed: renewed.map((task) => ({ task_id: task.id, lease_expires_at: task.lease_expires_at })),
      reservations: (await tx.reservationsOfSession(session, databaseNow)).map(viewOf),
    });
  });
}

/**
 * `paths` given: the claim is on files, not a task. `claim` (and `renew`) reserves them for the
 * session's task (task_id, else the task it works on, else none), `release` gives them back.
 */
async function claimFiles(
  deps: ServiceDeps,
  input: ClaimInput & { paths: string[] },
  action: "claim" | "renew" | "release",
  caller: Caller,
): Promise<Result<ClaimResult>> {
  if (input.next) throw new ArbeitError("INVALID_ARGUMENT", "paths reserve files; next: true does not go with them.");
  return mutate(deps, caller, async (w) => {
    if (action === "release") return ok(await releaseFiles(w, input.paths, input.force));
    let taskId: string | null = null;
    if (input.task_id) {
      // Locked first, as every write that touches a task does, before the reservations.
      const task = await requireTaskToChange(w.tx, input.task_id);
      await assertNotFenced(w, task);
      assertNotHeldByOther(w, task);
      taskId = task.id;
    } else {
      // The task the session works for: fenced as if named, for the session whose work it is
      // (a sub-agent reserves for its parent's task, under its parent's claim).
      const active = await workingFor(w.tx, w.session, caller.parents);
      if (active) {
        const task = await requireTaskToChange(w.tx, active.task_id);
        await assertNotFenced(w, task, active.session_id);
        taskId = task.id;
      }
    }
    return ok(
      await reserveFiles(w, {
        paths: input.paths,
        shared: input.shared,
        lease_seconds: input.lease_seconds,
        task_id: taskId,
      }),
    );
  });
}
