import { ArbeitError, taskNotFound } from "../domain/errors.js";
import { assertDepth, circular } from "../domain/hierarchy.js";
import type { Task } from "../domain/types.js";
import type { StoreTx } from "../store/task-store.js";

/**
 * The graph invariants every writer shares (task create/update and arbeit_relationship):
 * one parent, at most 4 levels, no cycles in the hierarchy or in blocks.
 */

export async function requireTask(tx: StoreTx, id: string): Promise<Task> {
  const task = await tx.getTask(id);
  if (task === undefined) throw taskNotFound(id);
  return task;
}

/**
 * The task, read to be changed: no other writer changes it until this transaction ends, so a
 * check made on it (its version, its claim) still holds when the write lands.
 */
export async function requireTaskToChange(tx: StoreTx, id: string): Promise<Task> {
  const task = await tx.lockTask(id);
  if (task === undefined) throw taskNotFound(id);
  return task;
}

/** Checks that `parentId` may become the parent of `childId` (null for a task not yet created). */
/**
 * Takes the graph lock (StoreTx.lockGraph) and runs `checks` under it, without waiting for the
 * lock's answer before sending their reads: a connection's statements run in the order sent, so
 * on Postgres the reads still run once the lock is held, in the same round trip. A lock that
 * could not be taken is the error reported, not the reads it aborted.
 */
export async function underGraphLock<T>(tx: StoreTx, checks: () => Promise<T>): Promise<T> {
  const locked = tx.lockGraph();
  locked.catch(() => {});
  const checked = checks();
  checked.catch(() => {});
  await locked;
  return checked;
}

export async function assertCanParent(tx: StoreTx, parentId: string, childId: string | null): Promise<void> {
  if (childId !== null && parentId === childId) throw circular("parent_of", parentId, childId);
  // The parent's depth is asked beside the parent: one wait, not two.
  const levelRead = tx.level(parentId);
  levelRead.catch(() => {});
  const parent = await tx.getTask(parentId);
  if (parent === undefined) {
    throw new ArbeitError("PARENT_NOT_FOUND", `Parent task ${parentId} does not exist (or was deleted).`, {
      details: { parent_id: parentId },
    });
  }
  if (childId !== null && (await tx.reaches(childId, parentId, "parent_of"))) {
    throw circular("parent_of", parentId, childId);
  }
  const height = childId === null ? 1 : await tx.subtreeHeight(childId);
  assertDepth(await levelRead, height, childId ?? "the new task");
}

/** Checks a whole blocked_by list for `taskId` (null for a task not yet created). */
export async function assertBlockerList(
  tx: StoreTx,
  taskId: string | null,
  blockerIds: readonly string[],
): Promise<void> {
  const seen = new Set<string>();
  const duplicates: string[] = [];
  for (const id of blockerIds) {
    if (seen.has(id)) duplicates.push(id);
    seen.add(id);
  }
  if (duplicates.length > 0) {
    throw new ArbeitError(
      "DUPLICATE_BLOCKERS",
      `blocked_by lists ${[...new Set(duplicates)].join(", ")} more than once.`,
      {
        details: { duplicates: [...new Set(duplicates)] },
      },
    );
  }
  if (taskId !== null && seen.has(taskId)) {
    throw new ArbeitError("INVALID_BLOCKER", `${taskId} cannot be blocked by itself.`, {
      details: { task_id: taskId },
    });
  }
  const found = new Set((await tx.getTasks(blockerIds)).map((task) => task.id));
  const missing = blockerIds.filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new ArbeitError("BLOCKER_NOT_FOUND", `blocked_by names tasks that do not exist: ${missing.join(", ")}.`, {
      details: { missing },
    });
  }
}

/** Checks that the edge blocker -> blocked closes no cycle. */
export async function assertCanBlock(tx: StoreTx, blockerId: string, blockedId: string): Promise<void> {
  if (blockerId === blockedId || (await tx.reaches(blockedId, blockerId, "blocks"))) {
    throw circular("blocks", blockerId, blockedId);
  }
}

/** Optimistic concurrency: a stale expected_version is refused with the current one. */
export function assertVersion(task: Task, expected: number | undefined): void {
  if (expected === undefined || expected === task.version) return;
  throw new ArbeitError(
    "VERSION_CONFLICT",
    `${task.id} is at version ${task.version}, not ${expected}: someone changed it since you read it.`,
    { details: { task_id: task.id, current_version: task.version, expected_version: expected } },
  );
}
