/** UTF-8 size of a value's JSON. Kept apart from the zod schemas: the service uses it without them. */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? "").length;
}

/**
 * The path to the first object or array nested deeper than `limit` levels in `value` (the value
 * itself is level 1), or undefined when none is. Iterative, and it never looks below the limit, so
 * a hostile million-level nesting (or a cycle) is measured without exhausting the stack.
 */
export function pathDeeperThan(value: unknown, limit: number): string[] | undefined {
  type Node = { value: unknown; depth: number; key: string; parent: Node | undefined };
  const stack: Node[] = [{ value, depth: 1, key: "", parent: undefined }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.value === null || typeof node.value !== "object") continue;
    if (node.depth > limit) {
      const path: string[] = [];
      for (let at: Node | undefined = node; at?.parent; at = at.parent) path.unshift(at.key);
      return path;
    }
    for (const [key, child] of Object.entries(node.value)) {
      stack.push({ value: child, depth: node.depth + 1, key, parent: node });
    }
  }
  return undefined;
}
