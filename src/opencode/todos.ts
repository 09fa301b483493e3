import type { HostListItem } from "../service/host-steps.js";

/**
 * OpenCode's own todo list (the `todowrite` tool; a `todo.updated` event carries the session's
 * whole list each time it changes), mirrored as progress items of the session's active task by
 * the rule every host shares (src/service/host-steps.ts). OpenCode 1.18's todos carry no id, so a
 * todo and its item are matched by their text: a todo whose text changes counts as a new step.
 */

export type Todo = HostListItem & { content: string };

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
