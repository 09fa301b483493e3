import { LIMITS } from "../schemas/limits.js";
import type { ArbeitService } from "../service/arbeit-service.js";
import type { Caller } from "../service/caller.js";

/**
 * OpenCode's own todo list (the `todowrite` tool; a `todo.updated` event carries the session's
 * whole list each time it changes) mirrored as progress items of the session's active task, so the
 * plan outlives the session:
 *
 * - a todo the task has no step for becomes a progress item (done already if the todo is);
 * - a completed todo completes its item;
 * - a cancelled todo adds nothing and leaves an existing item as it is, as does a todo dropped
 *   from the list: progress items cannot be cancelled or removed, and a step may still matter;
 * - an item completed in Arbeit is never reopened by a todo that is not.
 *
 * A todo and its item are matched by their text (OpenCode 1.18's todos carry no id), so the mirror
 * is idempotent: a repeated event, a restarted OpenCode, or a step the agent already added with
 * arbeit_progress_add adds nothing twice. A todo whose text changes counts as a new step. Without
 * active work (a sub-agent's session included) nothing is mirrored.
 */

export interface Todo {
  content: string;
  status: string;
}

/** The todos of a `todo.updated` event, ignoring anything malformed. */
export function todosOf(properties: unknown): Todo[] {
  const todos = (properties as { todos?: unknown } | null | undefined)?.todos;
  if (!Array.isArray(todos)) return [];
  return todos.flatMap((todo) =>
    todo && typeof todo.content === "string" && todo.content.trim() !== "" && typeof todo.status === "string"
      ? [{ content: todo.content, status: todo.status }]
      : [],
  );
}

/** The text a todo's progress item holds: one line, within the progress item limit. */
function stepText(content: string): string {
  return content.replace(/\s+/g, " ").trim().slice(0, LIMITS.progress_item);
}

export async function mirrorTodos(service: ArbeitService, caller: Caller, todos: readonly Todo[]): Promise<void> {
  if (!caller.session || todos.length === 0) return;
  const work = await service.sessionTask(caller.session);
  if (!work?.active) return;
  const { data } = await service.getTask({ task_id: work.task_id, include: ["progress"] });
  const items = new Map<string, { id: string; completed: boolean }>();
  for (const item of data.progress ?? [])
    if (!items.has(stepText(item.content))) items.set(stepText(item.content), item);

  const added: string[] = [];
  const done = new Set<string>();
  for (const todo of todos) {
    const text = stepText(todo.content);
    if (todo.status === "cancelled") continue;
    if (!items.has(text) && !added.includes(text)) added.push(text);
    if (todo.status === "completed") done.add(text);
  }
  for (let i = 0; i < added.length; i += LIMITS.progress_items) {
    const { data: result } = await service.addProgress(
      { task_id: work.task_id, items: added.slice(i, i + LIMITS.progress_items) },
      caller,
    );
    for (const item of result.items) items.set(item.content, item);
  }
  const completing = [...done].flatMap((text) => {
    const item = items.get(text);
    return item && !item.completed ? [item.id] : [];
  });
  for (let i = 0; i < completing.length; i += LIMITS.id_list) {
    await service.completeProgress({ item_ids: completing.slice(i, i + LIMITS.id_list) }, caller);
  }
}
