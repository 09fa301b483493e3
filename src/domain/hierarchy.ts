import { ArbeitError } from "./errors.js";
import { MAX_HIERARCHY_DEPTH } from "./types.js";

/**
 * Depth rule: a root is level 1 and no task may sit below level 4.
 * `parentLevel` is the level of the new parent; `subtreeHeight` counts the moved task itself as 1.
 */
export function assertDepth(parentLevel: number, subtreeHeight: number, taskLabel: string): void {
  const deepest = parentLevel + subtreeHeight;
  if (deepest > MAX_HIERARCHY_DEPTH) {
    throw new ArbeitError(
      "MAX_DEPTH_EXCEEDED",
      `Placing ${taskLabel} there would make the hierarchy ${deepest} levels deep; the limit is ${MAX_HIERARCHY_DEPTH}.`,
      { details: { depth: deepest, max_depth: MAX_HIERARCHY_DEPTH } },
    );
  }
}

export function circular(kind: "blocks" | "parent_of", from: string, to: string): ArbeitError {
  const what = kind === "blocks" ? "dependency" : "hierarchy";
  return new ArbeitError(
    "CIRCULAR_DEPENDENCY",
    from === to
      ? `${from} cannot be linked to itself in the ${what}.`
      : `Linking ${from} -> ${to} would close a cycle in the ${what}: ${to} already leads back to ${from}.`,
    { details: { from_task_id: from, to_task_id: to, type: kind } },
  );
}
