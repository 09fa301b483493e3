/**
 * Task-graph analysis over blocks edges between unfinished tasks: the edge a -> b
 * means a must finish before b. Pure functions over ids; callers supply the edges.
 */
export type Edge = readonly [from: string, to: string];

/**
 * The graph in compact form: node i's successors are `targets[offsets[i] .. offsets[i + 1])`.
 * Typed arrays rather than an array per node: a store's whole graph (tens of thousands of edges)
 * is built for every analysis call, and allocation was most of its cost.
 */
interface Graph {
  ids: string[];
  offsets: Int32Array;
  targets: Int32Array;
  inDegree: Int32Array;
}

function build(edges: readonly Edge[]): Graph {
  const index = new Map<string, number>();
  const ids: string[] = [];
  const from = new Int32Array(edges.length);
  const to = new Int32Array(edges.length);
  for (let e = 0; e < edges.length; e++) {
    const [a, b] = edges[e]!;
    let i = index.get(a);
    if (i === undefined) {
      i = ids.length;
      index.set(a, i);
      ids.push(a);
    }
    let j = index.get(b);
    if (j === undefined) {
      j = ids.length;
      index.set(b, j);
      ids.push(b);
    }
    from[e] = i;
    to[e] = j;
  }
  const n = ids.length;
  const offsets = new Int32Array(n + 1);
  const inDegree = new Int32Array(n);
  for (let e = 0; e < edges.length; e++) {
    offsets[from[e]! + 1]! += 1;
    inDegree[to[e]!]! += 1;
  }
  for (let i = 0; i < n; i++) offsets[i + 1]! += offsets[i]!;
  const fill = offsets.slice(0, n);
  const targets = new Int32Array(edges.length);
  for (let e = 0; e < edges.length; e++) targets[fill[from[e]!]!++] = to[e]!;
  return { ids, offsets, targets, inDegree };
}

function outDegree(graph: Graph, node: number): number {
  return graph.offsets[node + 1]! - graph.offsets[node]!;
}

/** Kahn's order; nodes on a cycle (which the write rules forbid) are left out, not looped on. */
function topologicalOrder(graph: Graph): Int32Array {
  const { offsets, targets } = graph;
  const degree = graph.inDegree.slice();
  const queue = new Int32Array(graph.ids.length);
  let tail = 0;
  for (let i = 0; i < degree.length; i++) if (degree[i] === 0) queue[tail++] = i;
  for (let head = 0; head < tail; head++) {
    const node = queue[head]!;
    for (let k = offsets[node]!; k < offsets[node + 1]!; k++) {
      const next = targets[k]!;
      if (--degree[next]! === 0) queue[tail++] = next;
    }
  }
  return queue.subarray(0, tail);
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
    for (let k = graph.offsets[node]!; k < graph.offsets[node + 1]!; k++) {
      const next = graph.targets[k]!;
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
 * Gives how deep the layers go, how many tasks have a blocker (are in layer 1 or deeper), and the
 * tasks of layers 0 to `upTo`: a long chain makes a layer per task, so the deeper layers are only
 * counted.
 */
export function dependencyLayers(
  edges: readonly Edge[],
  upTo: number,
): { deepest: number; blocked: number; layers: string[][] } {
  const graph = build(edges);
  const layer = new Int32Array(graph.ids.length);
  let deepest = 0;
  for (const node of topologicalOrder(graph)) {
    const next = layer[node]! + 1;
    for (let k = graph.offsets[node]!; k < graph.offsets[node + 1]!; k++) {
      const target = graph.targets[k]!;
      if (layer[target]! < next) layer[target] = next;
    }
    if (layer[node]! > deepest) deepest = layer[node]!;
  }
  const layers: string[][] = Array.from({ length: Math.min(upTo, deepest) + 1 }, () => []);
  let blocked = 0;
  for (let i = 0; i < layer.length; i++) {
    if (layer[i]! > 0) blocked++;
    layers[layer[i]!]?.push(graph.ids[i]!);
  }
  return { deepest, blocked, layers };
}

export interface Bottleneck {
  id: string;
  /** Unfinished tasks held up, directly or through others, each counted once. */
  blocks: number;
  direct: number;
}

function reachCount(graph: Graph, source: number, seen: Int32Array, stack: number[]): number {
  const { offsets, targets } = graph;
  let count = 0;
  for (let k = offsets[source]!; k < offsets[source + 1]!; k++) stack.push(targets[k]!);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen[node] === source) continue;
    seen[node] = source;
    count++;
    for (let k = offsets[node]!; k < offsets[node + 1]!; k++) stack.push(targets[k]!);
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
  return topOf(build(edges), limit);
}

/**
 * The top `limit` bottlenecks together with what each of `ids` holds up (a task on no edge holds
 * up nothing), from one build of the graph: the risks query ranks both.
 */
export function bottlenecksAnd(edges: readonly Edge[], limit: number, ids: Iterable<string>): Bottleneck[] {
  const graph = build(edges);
  const top = topOf(graph, limit);
  const out = new Map(top.map((b) => [b.id, b]));
  const index = new Map(graph.ids.map((id, i) => [id, i]));
  const seen = new Int32Array(graph.ids.length).fill(-1);
  const stack: number[] = [];
  for (const id of ids) {
    if (out.has(id)) continue;
    const node = index.get(id);
    out.set(
      id,
      node === undefined
        ? { id, blocks: 0, direct: 0 }
        : { id, blocks: reachCount(graph, node, seen, stack), direct: outDegree(graph, node) },
    );
  }
  return [...out.values()];
}

function topOf(graph: Graph, limit: number): Bottleneck[] {
  const n = graph.ids.length;
  const bound = new Float64Array(n);
  const order = topologicalOrder(graph);
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    let sum = 0;
    for (let k = graph.offsets[node]!; k < graph.offsets[node + 1]!; k++) sum += 1 + bound[graph.targets[k]!]!;
    bound[node] = Math.min(sum, n);
  }
  const candidates = [...order].filter((node) => outDegree(graph, node) > 0).sort((a, b) => bound[b]! - bound[a]!);
  const better = (a: Bottleneck, b: Bottleneck) =>
    b.blocks - a.blocks || b.direct - a.direct || a.id.localeCompare(b.id);
  const seen = new Int32Array(n).fill(-1);
  const stack: number[] = [];
  const top: Bottleneck[] = [];
  for (const node of candidates) {
    // Ties on the count still need walking: they are ordered by direct count and id after.
    if (top.length >= limit && bound[node]! < top[limit - 1]!.blocks) break;
    top.push({ id: graph.ids[node]!, blocks: reachCount(graph, node, seen, stack), direct: outDegree(graph, node) });
    top.sort(better);
    if (top.length > limit) top.pop();
  }
  return top;
}
