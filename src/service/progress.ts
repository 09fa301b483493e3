import { ArbeitError } from "../domain/errors.js";
import type { ProgressItem } from "../domain/types.js";
import type { Caller } from "./caller.js";
import { assertNotFenced } from "./claims.js";
import { requireTask } from "./invariants.js";
import { mutate, ok, type Result, type ServiceDeps } from "./operation.js";

export async function addProgress(
  deps: ServiceDeps,
  input: {
    task_id: string;
    items: string[];
    completed?: boolean;
    /** A host's id for each item (its own task list's), kept on the event for the host's mirror. */
    host_keys?: ReadonlyArray<string | undefined>;
  },
  caller: Caller,
): Promise<Result<{ items: ProgressItem[] }>> {
  const blank = input.items.findIndex((item) => item.trim() === "");
  if (input.items.length === 0 || blank !== -1) {
    throw new ArbeitError(
      "INVALID_ARGUMENT",
      input.items.length === 0 ? "items must list at least one step." : `items[${blank}] is empty.`,
    );
  }
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    const task = await requireTask(tx, input.task_id);
    await assertNotFenced(w, task);
    const completed = input.completed ?? false;
    const ids: string[] = [];
    for (const content of input.items)
      ids.push(await tx.insertProgress({ task_id: task.id, content, completed, created_at: now }));
    const items = await tx.getProgressItems(ids);
    const byId = new Map(items.map((item) => [item.id, item]));
    const ordered = ids.map((id) => byId.get(id)!);
    await w.emit({
      event_type: "progress_added",
      entity_type: "progress_item",
      entity_id: ids[0]!,
      task_id: task.id,
      payload: {
        items: ordered.map(({ id, content, completed }, n) => {
          const host_key = input.host_keys?.[n];
          return { id, content, completed, ...(host_key ? { host_key } : {}) };
        }),
      },
    });
    return ok({ items: ordered });
  });
}

/** Marks items done; items already done are returned unchanged (a retry is harmless). */
export async function completeProgress(
  deps: ServiceDeps,
  input: { item_ids: string[] },
  caller: Caller,
): Promise<Result<{ completed: ProgressItem[] }>> {
  const ids = [...new Set(input.item_ids)];
  if (ids.length === 0) throw new ArbeitError("INVALID_ARGUMENT", "item_ids must list at least one progress item.");
  return mutate(deps, caller, async (w) => {
    const { tx, now } = w;
    const items = await tx.lockProgressItems(ids);
    const tasks = await tx.getTasks([...new Set(items.map((item) => item.task_id))]);
    for (const task of tasks) await assertNotFenced(w, task);
    const live = new Set(tasks.map((task) => task.id));
    const found = new Set(items.filter((item) => live.has(item.task_id)).map((item) => item.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length > 0) {
      throw new ArbeitError("ENTRY_NOT_FOUND", `Progress items not found: ${missing.join(", ")}.`, {
        details: { missing },
      });
    }
    const pending = items.filter((item) => !item.completed);
    await tx.completeProgress(
      pending.map((item) => item.id),
      now,
    );
    const byTask = new Map<string, string[]>();
    for (const item of pending) byTask.set(item.task_id, [...(byTask.get(item.task_id) ?? []), item.id]);
    for (const [taskId, itemIds] of byTask) {
      await w.emit({
        event_type: "progress_completed",
        entity_type: "progress_item",
        entity_id: itemIds[0]!,
        task_id: taskId,
        payload: { item_ids: itemIds },
      });
    }
    const after = new Map((await tx.getProgressItems(ids)).map((item) => [item.id, item]));
    return ok({ completed: ids.map((id) => after.get(id)!) });
  });
}
