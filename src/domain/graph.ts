/**
 * Task-graph analysis over blocks edges between unfinished tasks (seed 003): the edge a -> b
 * means a must finish before b. Pure functions over ids; callers supply the edges.
 */
export type Edge = readonly [from: string, to: string];

interface Graph {
  ids: string[];
  index: Map<string, number>;
  out: number[][];
  inDegree: number[];
}

function build(edges: readonly Edge[]): Graph {
  const index = new Map<string, number>();
  const ids: string[] = [];
  const at = (id: string) => {
    let i = index.get(id);
    if (i === undefined) {
      i = ids.length;
      index.set(id, i);
      ids.push(id);
    }
    return i;
  };
  const out: number[][] = [];
  const inDegree: number[] = [];
  for (const [from, to] of edges) {
    const a = at(from);
    const b = at(to);
    while (out.length < ids.length) {
      out.push([]);
      inDegree.push(0);
    }
    out[a]!.push(b);
    inDegree[b]! += 1;
  }
  return { ids, index, out, inDegree };
}

/** Kahn's order; nodes on a cycle (which the write rules forbid) are left out, not looped on. */
function topologicalOrder(graph: Graph): number[] {
  const degree = [...graph.inDegree];
  const queue: number[] = [];
  degree.forEach((d, i) => {
    if (d === 0) queue.push(i);
  });
  for (let head = 0; head < queue.length; head++) {
    for (const next of graph.out[queue[head]!]!) {
      degree[next]! -= 1;
      if (degree[next] === 0) queue.push(next);
    }
  }
  return queue;
}

/** The longest chain of unfinished work, as ids in the order they must be done. */
export function criticalPath(
  edges: readonly Edge[],
  tieBreak: (a: string, b: string) => number = (a, b) => a.localeCompare(b),
): string[] {
  if (edges.length === 0) return [];
  const graph = build(edges);
  const length = new Array<number>(graph.ids.length).fill(1);
  const previous = new Array<number>(graph.ids.length).fill(-1);
  for (const node of topologicalOrder(graph)) {
    for (const next of graph.out[node]!) {
      const candidate = length[node]! + 1;
      const better =
        candidate > length[next]! ||
        (candidate === length[next]! &&
          previous[next]! >= 0 &&
          tieBreak(graph.ids[node]!, graph.ids[previous[next]!]!) < 0);
      if (better) {
        length[next] = candidate;
        previous[next] = node;
      }
    }
  }
  let end = 0;
  for (let i = 1; i < length.length; i++) {
    if (length[i]! > length[end]! || (length[i] === length[end] && tieBreak(graph.ids[i]!, graph.ids[end]!) < 0))
      end = i;
  }
  const path: string[] = [];
  for (let node = end; node >= 0; node = previous[node]!) path.push(graph.ids[node]!);
  return path.reverse();
}

/**
 * Dependency layers: layer 0 has no unfinished blocker; a task in layer k waits only on tasks in
 * layers below k, so each layer's tasks can run side by side. Only tasks on some edge appear.
 */
export function dependencyLayers(edges: readonly Edge[]): Map<string, number> {
  const graph = build(edges);
  const layer = new Array<number>(graph.ids.length).fill(0);
  for (const node of topologicalOrder(graph)) {
    for (const next of graph.out[node]!) layer[next] = Math.max(layer[next]!, layer[node]! + 1);
  }
  return new Map(graph.ids.map((id, i) => [id, layer[i]!]));
}

export interface Bottleneck {
  id: string;
  /** Unfinished tasks held up, directly or through others, each counted once. */
  blocks: number;
  direct: number;
}

function reachCount(graph: Graph, source: number, seen: Int32Array, stack: number[]): number {
  let count = 0;
  stack.push(...graph.out[source]!);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen[node] === source) continue;
    seen[node] = source;
    count++;
    for (const next of graph.out[node]!) stack.push(next);
  }
  return count;
}

/**
 * The `limit` tasks that hold up the most unfinished work, most first (ties: more direct, then
 * id). Exact, without walking from every task: a bound is summed up the graph in one pass (it
 * counts a task once per path, so it never undercounts), then tasks are walked in order of their
 * bound until no remaining bound can beat the last of the top `limit`.
 */
export function topBottlenecks(edges: readonly Edge[], limit: number): Bottleneck[] {
  const graph = build(edges);
  const n = graph.ids.length;
  const bound = new Float64Array(n);
  const order = topologicalOrder(graph);
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    let sum = 0;
    for (const next of graph.out[node]!) sum += 1 + bound[next]!;
    bound[node] = Math.min(sum, n);
  }
  const candidates = [...order].filter((node) => graph.out[node]!.length > 0).sort((a, b) => bound[b]! - bound[a]!);
  const better = (a: Bottleneck, b: Bottleneck) =>
    b.blocks - a.blocks || b.direct - a.direct || a.id.localeCompare(b.id);
  const seen = new Int32Array(n).fill(-1);
  const stack: number[] = [];
  const top: Bottleneck[] = [];
  for (const node of candidates) {
    // Ties on the count still need walking: they are ordered by direct count and id after.
    if (top.length >= limit && bound[node]! < top[limit - 1]!.blocks) break;
    top.push({ id: graph.ids[node]!, blocks: reachCount(graph, node, seen, stack), direct: graph.out[node]!.length });
    top.sort(better);
    if (top.length > limit) top.pop();
  }
  return top;
}
