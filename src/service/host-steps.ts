import { withoutSecrets } from "../domain/secrets.js";
import { LIMITS } from "../schemas/limits.js";
import type { ArbeitService } from "./arbeit-service.js";
import type { Caller } from "./caller.js";

/**
 * A host's own list of steps (OpenCode's todo list, Claude Code's task list and older TodoWrite
 * list, the steps of an approved plan) mirrored as progress items of an Arbeit task, so the plan
 * outlives the session:
 *
 * - a step the task has no item for becomes a progress item (done already if the step is);
 * - a completed step completes its item;
 * - a cancelled or deleted step adds nothing and leaves an existing item as it is, as does a step
 *   dropped from the list: progress items cannot be cancelled or removed, and a step may still matter;
 * - an item completed in Arbeit is never reopened by a step that is not.
 *
 * A step with the host's id (`key`: Claude Code's task ids) is matched to the item first added
 * for that id, whatever its text has become since; any other step is matched by its text (one
 * line, as stored), so a step the agent already added with arbeit_progress_add is not added
 * again. Either way the mirror is idempotent: a repeated call, a restarted host, or a repeated
 * hook adds nothing twice. Without a task to mirror into (by default the session's active work;
 * none for a sub-agent without work of its own) nothing is mirrored.
 */

export interface HostListItem {
  /** The host's id for the step, unique within the task; matched before the text. */
  key?: string;
  /** The step's text; absent for an update that names only the id. */
  content?: string;
  /** pending | in_progress | completed | cancelled | deleted (anything else counts as open). */
  status: string;
}

/** The most characters of a host's step key kept with its item. */
export const HOST_KEY_CHARS = 300;

const DROPPED = new Set(["cancelled", "deleted"]);

/** The text a step's progress item holds: one line, within the progress item limit. */
export function stepText(content: string): string {
  return content.replace(/\s+/g, " ").trim().slice(0, LIMITS.progress_item);
}

interface Item {
  id: string;
  completed: boolean;
}

/** The task's items by host key, from the progress_added events that carried one. */
async function itemsByKey(service: ArbeitService, taskId: string): Promise<Map<string, string>> {
  const keys = new Map<string, string>();
  let after = 0;
  for (;;) {
    const events = await service.store.read((tx) =>
      tx.listEvents({ after_seq: after, task_id: taskId, event_types: ["progress_added"], limit: 500 }),
    );
    for (const event of events) {
      const items = event.payload.items;
      if (!Array.isArray(items)) continue;
      for (const item of items as Array<{ id?: unknown; host_key?: unknown }>)
        if (typeof item.host_key === "string" && typeof item.id === "string" && !keys.has(item.host_key))
          keys.set(item.host_key, item.id);
    }
    if (events.length < 500) return keys;
    after = events.at(-1)!.seq;
  }
}

/**
 * Mirrors `steps` into the progress of `taskId` (default: the session's active task), in one
 * write transaction so that two hooks mirroring at once never both add a step.
 */
export async function mirrorHostSteps(
  service: ArbeitService,
  caller: Caller,
  given: readonly HostListItem[],
  taskId?: string,
): Promise<void> {
  if (given.length === 0) return;
  // Compared with the items as they were stored: without secrets (see ArbeitService).
  const steps = withoutSecrets(given).value;
  await service.atomically(async () => {
    let target = taskId;
    if (target === undefined) {
      if (!caller.session) return;
      const work = await service.sessionTask(caller.session);
      if (!work?.active) return;
      target = work.task_id;
    }
    // The task is locked before its items are read (in the same round trip): of two hooks
    // mirroring into it at once, the second reads the steps the first added.
    const task = target;
    const locked = service.store.write((tx) => tx.lockTask(task));
    locked.catch(() => {});
    const read = service.getTask({ task_id: target, include: ["progress"] });
    read.catch(() => {});
    await locked;
    const { data } = await read;
    const byId = new Map<string, Item>();
    const byText = new Map<string, Item>();
    for (const item of data.progress ?? []) {
      byId.set(item.id, item);
      if (!byText.has(stepText(item.content))) byText.set(stepText(item.content), item);
    }
    const keyed = steps.some((step) => step.key !== undefined) ? await itemsByKey(service, target) : new Map();
    const find = (step: HostListItem): Item | undefined => {
      const id = step.key === undefined ? undefined : keyed.get(step.key);
      if (id !== undefined && byId.has(id)) return byId.get(id);
      return step.content === undefined ? undefined : byText.get(stepText(step.content));
    };

    const added: Array<{ text: string; key?: string }> = [];
    for (const step of steps) {
      if (DROPPED.has(step.status) || find(step)) continue;
      const text = step.content === undefined ? "" : stepText(step.content);
      if (text === "" || added.some((entry) => entry.text === text || (step.key && entry.key === step.key))) continue;
      added.push({ text, ...(step.key ? { key: step.key } : {}) });
    }
    for (let i = 0; i < added.length; i += LIMITS.progress_items) {
      const batch = added.slice(i, i + LIMITS.progress_items);
      const { data: result } = await service.addProgress(
        { task_id: target, items: batch.map((entry) => entry.text), host_keys: batch.map((entry) => entry.key) },
        caller,
      );
      result.items.forEach((item, n) => {
        const key = batch[n]!.key;
        if (key) keyed.set(key, item.id);
        byId.set(item.id, item);
        if (!byText.has(item.content)) byText.set(item.content, item);
      });
    }
    const completing = new Set<string>();
    for (const step of steps) {
      const item = step.status === "completed" ? find(step) : undefined;
      if (item && !item.completed) completing.add(item.id);
    }
    const ids = [...completing];
    for (let i = 0; i < ids.length; i += LIMITS.id_list) {
      await service.completeProgress({ item_ids: ids.slice(i, i + LIMITS.id_list) }, caller);
    }
  });
}
