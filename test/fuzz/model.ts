/**
 * The fuzz test's reference model: the task graph, deletions, supersede chains and progress as
 * the rules say they should be after each successful call, kept without SQL. The harness applies
 * every success to it and then compares it with the database, so a call that "succeeds" but
 * writes the wrong thing is caught as surely as one that fails.
 */
export interface ModelTask {
  id: string;
  deleted: boolean;
  status: string;
  /** The live parent_of edge into this task (it stays when the task is deleted). */
  parent: string | null;
  /** Live blocks edges into this task, including edges from deleted blockers (orphans). */
  blockers: Set<string>;
  intent: string | null;
  risk: string | null;
  impact: string | null;
}

export interface ModelContext {
  task: string;
  supersededBy: string | null;
}

export class Model {
  readonly tasks = new Map<string, ModelTask>();
  readonly contexts = new Map<string, ModelContext>();
  readonly progress = new Map<string, { task: string; completed: boolean }>();
  /** Live edges of the other relationship types, keyed `from type to`. */
  readonly otherEdges = new Set<string>();

  live(): ModelTask[] {
    return [...this.tasks.values()].filter((task) => !task.deleted);
  }

  deleted(): ModelTask[] {
    return [...this.tasks.values()].filter((task) => task.deleted);
  }

  children(id: string, includeDeleted = false): ModelTask[] {
    return [...this.tasks.values()].filter((task) => task.parent === id && (includeDeleted || !task.deleted));
  }

  /** Level in the hierarchy, a root being 1, following parent edges as stored. */
  level(id: string): number {
    let level = 1;
    for (let at = this.tasks.get(id)?.parent; at && level < 32; at = this.tasks.get(at)?.parent) level++;
    return level;
  }

  /** Height of the live subtree under `id`, the task itself counting 1. */
  height(id: string): number {
    const below = this.children(id).map((child) => this.height(child.id));
    return 1 + Math.max(0, ...below);
  }

  /** True when `target` is reachable from `from` along live blocks edges between live tasks. */
  blocksReach(from: string, target: string): boolean {
    const seen = new Set<string>();
    const stack = [from];
    while (stack.length > 0) {
      const at = stack.pop()!;
      if (at === target) return true;
      if (seen.has(at)) continue;
      seen.add(at);
      for (const task of this.live()) if (task.blockers.has(at)) stack.push(task.id);
    }
    return false;
  }

  /** True when `ancestor` is `id` or above it in the hierarchy. */
  isAncestor(ancestor: string, id: string): boolean {
    for (let at: string | null | undefined = id; at; at = this.tasks.get(at)?.parent) if (at === ancestor) return true;
    return false;
  }

  // ---- applying successful calls -------------------------------------------------------------

  addTask(
    id: string,
    args: {
      parent_id?: string;
      blocked_by?: string[];
      status?: string;
      intent?: string;
      risk?: string;
      impact?: string;
    },
  ): void {
    this.tasks.set(id, {
      id,
      deleted: false,
      status: args.status ?? "open",
      parent: args.parent_id ?? null,
      blockers: new Set(args.blocked_by ?? []),
      intent: args.intent ?? null,
      risk: args.risk ?? null,
      impact: args.impact ?? null,
    });
  }

  update(args: {
    task_id: string;
    status?: string;
    parent_id?: string | null;
    blocked_by?: string[];
    intent?: string;
    risk?: string | null;
    impact?: string | null;
  }): void {
    const task = this.tasks.get(args.task_id)!;
    if (args.status !== undefined) task.status = args.status;
    if (args.risk !== undefined) task.risk = args.risk;
    if (args.impact !== undefined) task.impact = args.impact;
    if (args.intent !== undefined) task.intent = args.intent;
    if (args.parent_id !== undefined) task.parent = args.parent_id;
    if (args.blocked_by !== undefined) {
      // The service replaces the live blockers it shows; edges from deleted blockers stay behind.
      const kept = [...task.blockers].filter((id) => this.tasks.get(id)?.deleted);
      task.blockers = new Set([...kept, ...args.blocked_by]);
    }
  }

  addEdge(from: string, type: string, to: string): void {
    if (type === "parent_of") this.tasks.get(to)!.parent = from;
    else if (type === "blocks") this.tasks.get(to)!.blockers.add(from);
    else this.otherEdges.add(`${from} ${type} ${to}`);
  }

  removeEdge(from: string, type: string, to: string): void {
    const task = this.tasks.get(to);
    if (type === "parent_of" && task?.parent === from) task.parent = null;
    else if (type === "blocks") task?.blockers.delete(from);
    else this.otherEdges.delete(`${from} ${type} ${to}`);
  }

  hasEdge(from: string, type: string, to: string): boolean {
    if (type === "parent_of") return this.tasks.get(to)?.parent === from;
    if (type === "blocks") return this.tasks.get(to)?.blockers.has(from) ?? false;
    return this.otherEdges.has(`${from} ${type} ${to}`);
  }
}

const INVERSE: Record<string, string> = {
  child_of: "parent_of",
  blocked_by: "blocks",
  duplicated_by: "duplicates",
  split_into: "splits_from",
};

/** An edge as the service stores it: inverse names swapped, relates_to in a fixed order. */
export function canonicalEdge(from: string, to: string, type: string): { from: string; to: string; type: string } {
  const inverse = INVERSE[type];
  if (inverse) return { from: to, to: from, type: inverse };
  if (type === "relates_to" && to < from) return { from: to, to: from, type };
  return { from, to, type };
}
