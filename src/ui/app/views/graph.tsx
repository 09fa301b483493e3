/**
 * The dependency graph: `blocks` edges laid out by dagre, drawn as SVG. The critical path and the
 * bottlenecks are marked; wheel or +/- zooms, dragging pans, a click (or Enter) opens a task.
 * Only tasks with an edge are drawn; the layout runs once per change of what is drawn.
 * Zoom is semantic: text too small to read is not drawn, the nodes become plain shapes; near,
 * each title is shown whole, wrapped. Find centres a task; `?focus=<id>&depth=<n>` draws only
 * that task's blockers and dependants, n levels each way. `?group=parent|epic` draws boxes round
 * each parent's (or epic's) tasks, nested as the hierarchy nests; `&collapsed=<id>,…` draws a box
 * as one node that carries its tasks' edges.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Overview, OverviewTask } from "../../contract.js";
import { ErrorAlert, FilterBar, matches, ownersOf } from "../common.js";
import { useOverview } from "../data.js";
import { type Filters, filtersOf, navigate, type Route, withParams } from "../router.js";

const NODE_W = 230;
/** Characters of a title per line, and the height of a line, at the node's 12-px text. */
const LINE_CHARS = 34;
const LINE_H = 15;
/** Below this scale the 12-px text would be under 9 px on screen: nodes are drawn as shapes. */
const READABLE_K = 0.75;
const DEFAULT_DEPTH = 2;
/** Beyond this many nodes the layout would take too long: the largest chains are drawn first. */
const MAX_NODES = 600;
/** Grouped graphs of more nodes than this are ranked by a tight tree (see runLayout). */
const TIGHT_TREE_FROM = 150;

interface Laid {
  nodes: Array<{ task: OverviewTask; x: number; y: number; lines: string[]; h: number }>;
  edges: Array<{ from: string; to: string; d: string }>;
  /** Boxes round the tasks of one parent or epic, when grouped: outer boxes first. */
  clusters: Array<{ parent: string; depth: number; x: number; y: number; width: number; height: number }>;
  width: number;
  height: number;
  /** Tasks left out: no edge (or filtered out), or past MAX_NODES. */
  hidden: number;
  capped: number;
  /** Each box's drawn tasks, at any depth. */
  counts: Map<string, GroupCount>;
  /** A task inside a collapsed box -> the node drawn for that box. */
  standFor: Map<string, string>;
}

/** Collapsed groups are drawn as one node with this id prefix before the box's task id. */
const GROUP = "group:";

/** What the tasks can be grouped by: each task's parent, or its nearest epic ancestor. */
export const GROUP_MODES = ["parent", "epic"] as const;
export type GroupBy = (typeof GROUP_MODES)[number];

/** The tasks to draw: those that pass the filters and have an edge to another such task. */
function selectGraph(
  overview: Overview,
  filters: Filters,
  focus?: { id: string; depth: number },
  grouping?: { by: GroupBy; collapsed: Set<string> },
) {
  const byId = new Map(overview.tasks.map((task) => [task.id, task]));
  const keep = new Set(overview.tasks.filter((task) => matches(task, filters)).map((task) => task.id));
  if (focus && byId.has(focus.id)) {
    const near = around(overview.edges, focus.id, focus.depth);
    for (const id of keep) if (!near.has(id)) keep.delete(id);
    keep.add(focus.id);
  }
  const edges = overview.edges.filter(([a, b]) => keep.has(a) && keep.has(b) && byId.has(a) && byId.has(b));
  // Connected components, so that a cap leaves out whole chains, never half of one.
  const adjacent = new Map<string, string[]>();
  for (const [a, b] of edges) {
    adjacent.set(a, [...(adjacent.get(a) ?? []), b]);
    adjacent.set(b, [...(adjacent.get(b) ?? []), a]);
  }
  const critical = new Set(overview.critical_path);
  const seen = new Set<string>();
  const components: string[][] = [];
  if (focus && keep.has(focus.id) && !adjacent.has(focus.id)) adjacent.set(focus.id, []);
  for (const start of adjacent.keys()) {
    if (seen.has(start)) continue;
    const component: string[] = [];
    const stack = [start];
    seen.add(start);
    while (stack.length > 0) {
      const id = stack.pop()!;
      component.push(id);
      for (const next of adjacent.get(id) ?? [])
        if (!seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
    }
    components.push(component);
  }
  const score = (component: string[]) => (component.some((id) => critical.has(id)) ? 1e9 : 0) + component.length;
  // Grouped, chains of equal weight are taken group by group: past the cap a person sees some
  // groups whole rather than every group in pieces (and the layout has fewer boxes to keep).
  const boxOf = grouping ? containerOf(byId, grouping.by) : undefined;
  const outermost = (id: string) => {
    let top: string | undefined;
    const seen = new Set<string>();
    for (let box = boxOf?.(id); box !== undefined && !seen.has(box); box = boxOf?.(box)) {
      seen.add(box);
      top = box;
    }
    return top ?? "\uffff";
  };
  const groupKey = new Map(components.map((component) => [component, boxOf ? outermost(component[0]!) : ""]));
  components.sort(
    (a, b) =>
      score(b) - score(a) || (groupKey.get(a)! < groupKey.get(b)! ? -1 : groupKey.get(a)! > groupKey.get(b)! ? 1 : 0),
  );
  const drawn = new Set<string>();
  let capped = 0;
  for (const component of components) {
    if (drawn.size > 0 && drawn.size + component.length > MAX_NODES) {
      capped += component.length;
      continue;
    }
    for (const id of component) drawn.add(id);
  }
  const ids = [...drawn].sort();
  let drawnEdges = edges.filter(([a, b]) => drawn.has(a) && drawn.has(b));
  let tasks = ids.map((id) => byId.get(id)!);
  const grouped = grouping ? groupTasks(byId, ids, grouping) : undefined;
  if (grouped) {
    const stand = (id: string) => grouped.standFor.get(id) ?? id;
    tasks = [...tasks.filter((task) => !grouped.standFor.has(task.id)), ...grouped.groupNodes];
    const seenEdges = new Set<string>();
    drawnEdges = drawnEdges
      .map(([a, b]): [string, string] => [stand(a), stand(b)])
      .filter(([a, b]) => a !== b && !seenEdges.has(`${a}>${b}`) && seenEdges.add(`${a}>${b}`));
  }
  const within = grouped?.within ?? new Map<string, string>();
  const boxes = grouped?.boxes ?? new Map<string, string | undefined>();
  return {
    tasks,
    edges: drawnEdges,
    within,
    boxes,
    counts: grouped?.counts ?? new Map<string, GroupCount>(),
    standFor: grouped?.standFor ?? new Map<string, string>(),
    hidden: overview.tasks.length - ids.length,
    capped,
    /** What the layout depends on: the same key, the same picture. */
    key: `${tasks.map((task) => task.id).join(",")}|${drawnEdges.map(([a, b]) => `${a}>${b}`).join(",")}|${[...within].join(",")}|${[...boxes].join(",")}`,
  };
}

/** How many drawn tasks a group holds (at any depth), and how many of them are finished. */
interface GroupCount {
  tasks: number;
  done: number;
}

/**
 * The box that holds task `id` when grouped: its parent, or (by epic) its nearest ancestor of
 * type epic. Boxes nest the same way: an epic's box sits in its own nearest epic's box.
 */
function containerOf(byId: Map<string, OverviewTask>, by: GroupBy): (id: string) => string | undefined {
  const memo = new Map<string, string | undefined>();
  const find = (id: string): string | undefined => {
    if (memo.has(id)) return memo.get(id);
    memo.set(id, undefined); // a hierarchy with a cycle (which the store refuses) ends here instead of looping
    const parent = byId.get(id)?.parent_id ?? undefined;
    let found: string | undefined;
    if (!parent || by === "parent") found = parent;
    else {
      // A parent in another list is not in the overview: its type is unknown, so the walk ends.
      const task = byId.get(parent);
      found = task?.type === "epic" ? parent : task ? find(parent) : undefined;
    }
    memo.set(id, found);
    return found;
  };
  return find;
}

/**
 * The drawn tasks in nested boxes. A collapsed box becomes one node (`group:<id>`) that stands
 * for every task inside it, its inner boxes included; the outermost collapsed box wins.
 */
function groupTasks(byId: Map<string, OverviewTask>, ids: string[], grouping: { by: GroupBy; collapsed: Set<string> }) {
  const boxOf = containerOf(byId, grouping.by);
  /** Drawn node -> the box it is drawn in. */
  const within = new Map<string, string>();
  /** Box -> the box it is drawn in (undefined at the top). */
  const boxes = new Map<string, string | undefined>();
  /** Hidden task -> the group node that stands for it. */
  const standFor = new Map<string, string>();
  const counts = new Map<string, GroupCount>();
  for (const id of ids) {
    const chain: string[] = [];
    for (let box = boxOf(id); box !== undefined && !chain.includes(box) && box !== id; box = boxOf(box))
      chain.push(box);
    const finished = byId.get(id)?.status === "completed";
    for (const box of chain) {
      const count = counts.get(box) ?? { tasks: 0, done: 0 };
      count.tasks++;
      if (finished) count.done++;
      counts.set(box, count);
    }
    let outer = -1;
    for (let i = chain.length - 1; i >= 0; i--)
      if (grouping.collapsed.has(chain[i]!)) {
        outer = i;
        break;
      }
    const node = outer < 0 ? id : `${GROUP}${chain[outer]}`;
    if (outer >= 0) standFor.set(id, node);
    const open = chain.slice(outer + 1);
    if (open[0] !== undefined) within.set(node, open[0]);
    for (const [i, box] of open.entries()) boxes.set(box, open[i + 1]);
  }
  const groupNodes = [...new Set(standFor.values())].map((id): OverviewTask => {
    const box = id.slice(GROUP.length);
    const task = byId.get(box);
    const count = counts.get(box)!;
    return {
      ...(task ?? ({} as OverviewTask)),
      id,
      status: task?.status ?? "open",
      title: `${task?.title ?? box} (${count.tasks} ${count.tasks === 1 ? "task" : "tasks"})`,
      parent_id: box,
    };
  });
  return { within, boxes, standFor, counts, groupNodes };
}

/** `id`, its blockers and theirs up to `depth` levels, and what it blocks, likewise. */
function around(edges: Array<[string, string]>, id: string, depth: number): Set<string> {
  const found = new Set([id]);
  for (const [from, to] of [
    [0, 1],
    [1, 0],
  ] as const) {
    let frontier = new Set([id]);
    for (let level = 0; level < depth && frontier.size > 0; level++) {
      const next = new Set<string>();
      for (const edge of edges)
        if (frontier.has(edge[to]) && !found.has(edge[from])) {
          found.add(edge[from]);
          next.add(edge[from]);
        }
      frontier = next;
    }
  }
  return found;
}

/** `text` cut to `max` characters, an ellipsis marking the cut. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** A title in lines of at most LINE_CHARS, broken between words where it can be. */
export function wrap(text: string, max = LINE_CHARS): string[] {
  const lines: string[] = [];
  let line = "";
  for (let word of text.split(/\s+/).filter(Boolean)) {
    while (word.length > max) {
      if (line) lines.push(line);
      lines.push(word.slice(0, max));
      word = word.slice(max);
      line = "";
    }
    if (!line) line = word;
    else if (line.length + 1 + word.length <= max) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line || lines.length === 0) lines.push(line);
  return lines;
}

const heightOf = (lines: string[]) => 20 + lines.length * LINE_H + 12;

type Dagre = typeof import("@dagrejs/dagre");
let dagreModule: Promise<Dagre> | undefined;

/** dagre is half the page's code: it is fetched (from this server) only when a graph is drawn. */
function useDagre(): Dagre | undefined {
  const [dagre, setDagre] = useState<Dagre>();
  useEffect(() => {
    let mounted = true;
    dagreModule ??= import("@dagrejs/dagre");
    void dagreModule.then((loaded) => mounted && setDagre(loaded));
    return () => {
      mounted = false;
    };
  }, []);
  return dagre;
}

function runLayout(
  { Graph, layout }: Dagre,
  tasks: OverviewTask[],
  edges: Array<[string, string]>,
  within: Map<string, string>,
  boxes: Map<string, string | undefined>,
): Omit<Laid, "hidden" | "capped" | "counts" | "standFor"> {
  const g = new Graph({ compound: boxes.size > 0 });
  g.setGraph({
    rankdir: "LR",
    nodesep: boxes.size > 0 ? 40 : 18,
    ranksep: 60,
    marginx: 20,
    marginy: 30,
    // Boxes add constraint edges round every group, and the default ranking (network simplex)
    // then takes most of the layout's time: three times the ungrouped layout's, at 600 tasks.
    // A large grouped graph is ranked by a tight tree instead, at a cost near the ungrouped one.
    ranker: boxes.size > 0 && tasks.length > TIGHT_TREE_FROM ? "tight-tree" : "network-simplex",
  });
  g.setDefaultEdgeLabel(() => ({}));
  const wrapped = tasks.map((task) => wrap(task.title));
  for (const [i, task] of tasks.entries()) g.setNode(task.id, { width: NODE_W, height: heightOf(wrapped[i]!) });
  for (const [a, b] of edges) g.setEdge(a, b);
  for (const box of boxes.keys()) g.setNode(`cluster:${box}`, {});
  for (const [box, outer] of boxes) if (outer !== undefined) g.setParent(`cluster:${box}`, `cluster:${outer}`);
  for (const [node, box] of within) g.setParent(node, `cluster:${box}`);
  const started = performance.now();
  layout(g);
  // The bench reads this measure: how long the layout alone took.
  performance.measure("arbeit-graph-layout", { start: started, detail: { nodes: tasks.length, boxes: boxes.size } });
  const depthOf = (box: string): number => {
    let depth = 0;
    for (let at = boxes.get(box); at !== undefined && depth < boxes.size; at = boxes.get(at)) depth++;
    return depth;
  };
  const laidClusters = [...boxes.keys()]
    .map((parent) => {
      const at = g.node(`cluster:${parent}`) as { x: number; y: number; width: number; height: number };
      return {
        parent,
        depth: depthOf(parent),
        x: at.x - at.width / 2,
        y: at.y - at.height / 2,
        width: at.width,
        height: at.height,
      };
    })
    .sort((p, q) => p.depth - q.depth);
  const nodes = tasks.map((task, i) => {
    const at = g.node(task.id) as { x: number; y: number };
    return { task, x: at.x, y: at.y, lines: wrapped[i]!, h: heightOf(wrapped[i]!) };
  });
  const laidEdges = edges.map(([from, to]) => {
    const points = ((g.edge(from, to) as { points?: Array<{ x: number; y: number }> }).points ?? []).map(
      (p) => `${Math.round(p.x)},${Math.round(p.y)}`,
    );
    return { from, to, d: points.length > 0 ? `M${points.join("L")}` : "" };
  });
  const label = g.graph() as { width?: number; height?: number };
  return { nodes, edges: laidEdges, clusters: laidClusters, width: label.width ?? 0, height: label.height ?? 0 };
}

interface View {
  x: number;
  y: number;
  k: number;
}

/** The URL of this graph with `parent`'s group collapsed (or expanded), the rest as they are. */
function collapseHref(parent: string, collapse: boolean): string {
  const now = (new URLSearchParams(location.search).get("collapsed") ?? "").split(",").filter(Boolean);
  const next = collapse ? [...now, parent] : now.filter((id) => id !== parent);
  return withParams("/graph", { collapsed: next.join(",") });
}

/** A task to centre: `n` changes with each search, so the same task can be centred again. */
interface Target {
  id: string;
  n: number;
}

function GraphCanvas({
  laid,
  overview,
  target,
  focusId,
}: {
  laid: Laid;
  overview: Overview;
  target?: Target;
  focusId?: string;
}) {
  const [view, setView] = useState<View>({ x: 0, y: 0, k: 1 });
  const [dragging, setDragging] = useState(false);
  const drag = useRef<{ x: number; y: number; vx: number; vy: number; moved: boolean } | null>(null);
  const svgRef = useRef<SVGSVGElement>(null);
  const critical = useMemo(() => new Set(overview.critical_path), [overview.critical_path]);
  // In a collapsed box, the critical path runs through the box's node.
  const criticalEdges = useMemo(() => {
    const set = new Set<string>();
    const drawnAs = (id: string) => laid.standFor.get(id) ?? id;
    for (let i = 1; i < overview.critical_path.length; i++)
      set.add(`${drawnAs(overview.critical_path[i - 1]!)}>${drawnAs(overview.critical_path[i]!)}`);
    return set;
  }, [overview.critical_path, laid.standFor]);
  const criticalGroups = useMemo(
    () => new Set(overview.critical_path.flatMap((id) => laid.standFor.get(id) ?? [])),
    [overview.critical_path, laid.standFor],
  );
  const bottlenecks = useMemo(() => new Map(overview.bottlenecks.map((b) => [b.id, b.blocks])), [overview.bottlenecks]);
  const titles = useMemo(() => new Map(overview.tasks.map((task) => [task.id, task.title])), [overview.tasks]);

  const zoom = (factor: number, cx?: number, cy?: number) => {
    const rect = svgRef.current?.getBoundingClientRect();
    const px = cx ?? (rect ? rect.width / 2 : 0);
    const py = cy ?? (rect ? rect.height / 2 : 0);
    setView((v) => {
      const k = Math.min(4, Math.max(0.05, v.k * factor));
      const f = k / v.k;
      return { k, x: px - (px - v.x) * f, y: py - (py - v.y) * f };
    });
  };
  const fitted = (): View | undefined => {
    const rect = svgRef.current?.getBoundingClientRect();
    if (!rect || laid.width === 0) return undefined;
    const k = Math.min(1.5, Math.max(0.05, Math.min(rect.width / laid.width, rect.height / laid.height)));
    return { k, x: (rect.width - laid.width * k) / 2, y: (rect.height - laid.height * k) / 2 };
  };
  const fit = () => setView(fitted() ?? { x: 0, y: 0, k: 1 });
  /** The view with task `id` in the middle, at a scale where its text reads. */
  const centredOn = (id: string, k: number): View | undefined => {
    const rect = svgRef.current?.getBoundingClientRect();
    const node = laid.nodes.find((n) => n.task.id === id);
    if (!rect || !node) return undefined;
    return { k, x: rect.width / 2 - node.x * k, y: rect.height / 2 - node.y * k };
  };

  // A new picture (not a live refresh of the same one) starts fitted to the screen when its text
  // reads at that scale; otherwise it starts readable, on the focused task, or else the start of
  // the critical path, or else the first task.
  const viewRef = useRef(view);
  viewRef.current = view;
  const shown = useRef(0);
  useEffect(() => {
    if (shown.current === laid.width * 1e6 + laid.height) return;
    shown.current = laid.width * 1e6 + laid.height;
    const whole = fitted();
    if (!whole || whole.k >= READABLE_K) return fit();
    const drawn = new Set(laid.nodes.map((n) => n.task.id));
    const start =
      [focusId, ...overview.critical_path].find((id) => id !== undefined && drawn.has(id)) ?? laid.nodes[0]?.task.id;
    setView((start ? centredOn(start, 1) : undefined) ?? whole);
  });
  // A task found by the search is centred (and zoomed in to read) and given the keyboard focus.
  useEffect(() => {
    if (!target) return;
    const view = centredOn(target.id, Math.max(1, viewRef.current.k));
    if (view) setView(view);
    svgRef.current?.querySelector<SVGAElement>(`[data-node="${CSS.escape(target.id)}"]`)?.focus();
  }, [target?.n]);
  const near = view.k >= READABLE_K;
  // Text is drawn only for tasks on screen (or a screen's width from it): a large graph seen near
  // draws a few dozen titles, not hundreds.
  const width = svgRef.current?.clientWidth ?? 0;
  const height = svgRef.current?.clientHeight ?? 0;
  const onScreen = (x: number, y: number) => {
    const sx = x * view.k + view.x;
    const sy = y * view.k + view.y;
    return sx > -width && sx < 2 * width && sy > -height && sy < 2 * height;
  };

  return (
    <div class="graph-wrap">
      <svg
        ref={svgRef}
        class={dragging ? "dragging" : undefined}
        data-zoom={near ? "near" : "far"}
        role="img"
        aria-label={`Dependency graph of ${laid.nodes.length} tasks`}
        onWheel={(event) => {
          event.preventDefault();
          const rect = svgRef.current!.getBoundingClientRect();
          zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, event.clientX - rect.left, event.clientY - rect.top);
        }}
        onPointerDown={(event) => {
          if (event.button !== 0) return;
          drag.current = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y, moved: false };
        }}
        onPointerMove={(event) => {
          const d = drag.current;
          if (!d) return;
          const dx = event.clientX - d.x;
          const dy = event.clientY - d.y;
          if (!d.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
          if (!d.moved) {
            d.moved = true;
            setDragging(true);
            svgRef.current?.setPointerCapture(event.pointerId);
          }
          setView((v) => ({ ...v, x: d.vx + dx, y: d.vy + dy }));
        }}
        onPointerUp={() => {
          setDragging(false);
          // A drag that moved is not a click on the node under it.
          const moved = drag.current?.moved;
          setTimeout(() => {
            if (drag.current?.moved === moved) drag.current = null;
          }, 0);
        }}
        onClickCapture={(event) => {
          if (drag.current?.moved) {
            event.preventDefault();
            event.stopPropagation();
          }
          drag.current = null;
        }}
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="10"
            refY="5"
            markerWidth="9"
            markerHeight="9"
            markerUnits="userSpaceOnUse"
            orient="auto"
          >
            <path class="arrow" d="M0,0L10,5L0,10z" />
          </marker>
        </defs>
        <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
          {laid.clusters.map((box) => {
            const title = titles.get(box.parent) ?? box.parent;
            const count = laid.counts.get(box.parent);
            const heading = `${title} (${count?.tasks ?? 0} ${count?.tasks === 1 ? "task" : "tasks"})`;
            return (
              <g key={box.parent} class="cluster" data-cluster={box.parent} data-depth={box.depth}>
                <rect x={box.x} y={box.y - 22} width={box.width} height={box.height + 22} rx="8" />
                {near && (
                  <a href={collapseHref(box.parent, true)} aria-label={`Collapse ${heading}`}>
                    <title>{heading}</title>
                    <text x={box.x + 8} y={box.y - 7}>
                      ▾ {clip(heading, Math.floor((box.width - 30) / 7))}
                    </text>
                  </a>
                )}
              </g>
            );
          })}
          {laid.edges.map((edge) => (
            <path
              key={`${edge.from}>${edge.to}`}
              class={criticalEdges.has(`${edge.from}>${edge.to}`) ? "edge critical" : "edge"}
              d={edge.d}
              marker-end="url(#arrow)"
              data-edge={`${edge.from}>${edge.to}`}
            />
          ))}
          {laid.nodes.map(({ task, x, y, lines, h }) => {
            if (task.id.startsWith(GROUP)) {
              const parent = task.id.slice(GROUP.length);
              const count = laid.counts.get(parent);
              const classes = ["node", "group-node", `status-${task.status}`];
              if (criticalGroups.has(task.id)) classes.push("critical");
              if (task.id === target?.id) classes.push("found");
              return (
                <a
                  key={task.id}
                  href={collapseHref(parent, false)}
                  class={classes.join(" ")}
                  data-group={parent}
                  data-node={task.id}
                  data-nav-item
                  aria-label={`Expand ${task.title}`}
                >
                  <g transform={`translate(${x - NODE_W / 2},${y - h / 2})`}>
                    <title>{`Expand ${task.title}`}</title>
                    <rect width={NODE_W} height={h} rx="6" />
                    {near && onScreen(x, y) && (
                      <>
                        <text x="8" y="18">
                          {lines.map((line, i) => (
                            <tspan key={i} x="8" dy={i === 0 ? 0 : LINE_H}>
                              {i === 0 ? `▸ ${line}` : line}
                            </tspan>
                          ))}
                        </text>
                        <text class="id" x="8" y={h - 10}>
                          {count ? `${count.done} of ${count.tasks} completed` : ""}
                        </text>
                      </>
                    )}
                  </g>
                </a>
              );
            }
            const classes = ["node", `status-${task.status}`];
            if (critical.has(task.id)) classes.push("critical");
            if (bottlenecks.has(task.id)) classes.push("bottleneck");
            if (task.id === target?.id) classes.push("found");
            if (task.id === focusId) classes.push("focus");
            const blocks = bottlenecks.get(task.id);
            const label = `${task.title} (${task.id}, ${task.status}${critical.has(task.id) ? ", on the critical path" : ""}${blocks ? `, bottleneck holding up ${blocks}` : ""})`;
            return (
              <a
                key={task.id}
                href={`/task/${task.id}`}
                class={classes.join(" ")}
                data-task-id={task.id}
                data-node={task.id}
                data-nav-item
                aria-label={label}
              >
                <g transform={`translate(${x - NODE_W / 2},${y - h / 2})`}>
                  <title>{label}</title>
                  <rect width={NODE_W} height={h} rx="6" />
                  {near && onScreen(x, y) && (
                    <>
                      <text x="8" y="18">
                        {lines.map((line, i) => (
                          <tspan key={i} x="8" dy={i === 0 ? 0 : LINE_H}>
                            {line}
                          </tspan>
                        ))}
                      </text>
                      <text class="id" x="8" y={h - 10}>
                        {task.id} · {task.status.replace("_", " ")}
                        {blocks ? ` · blocks ${blocks}` : ""}
                      </text>
                    </>
                  )}
                </g>
              </a>
            );
          })}
        </g>
      </svg>
      <div class="graph-controls">
        <button type="button" class="quiet" onClick={() => zoom(1.25)}>
          <span aria-hidden="true">+</span>
          <span class="sr-only">Zoom in</span>
        </button>
        <button type="button" class="quiet" onClick={() => zoom(1 / 1.25)}>
          <span aria-hidden="true">−</span>
          <span class="sr-only">Zoom out</span>
        </button>
        <button type="button" class="quiet" onClick={fit}>
          Fit
        </button>
      </div>
    </div>
  );
}

export function GraphPage({ route }: { route: Route }) {
  const filters = filtersOf(route.query);
  const focusId = route.query.get("focus") || undefined;
  const depth = Math.max(1, Number.parseInt(route.query.get("depth") ?? "", 10) || DEFAULT_DEPTH);
  const groupBy = GROUP_MODES.find((mode) => mode === route.query.get("group"));
  const collapsedText = route.query.get("collapsed") ?? "";
  const overview = useOverview(filters.list);
  const data = overview.data;
  const focusTask = focusId ? data?.tasks.find((task) => task.id === focusId) : undefined;
  const selected = useMemo(
    () =>
      data
        ? selectGraph(
            data,
            filters,
            focusId ? { id: focusId, depth } : undefined,
            groupBy ? { by: groupBy, collapsed: new Set(collapsedText.split(",").filter(Boolean)) } : undefined,
          )
        : undefined,
    [
      data,
      filters.list,
      filters.status,
      filters.type,
      filters.owner,
      filters.q,
      focusId,
      depth,
      groupBy,
      collapsedText,
    ],
  );
  const [target, setTarget] = useState<Target>();
  const [missed, setMissed] = useState("");
  // The layout is the slow part: it runs again only when the drawn tasks or edges change.
  const layoutKey = selected?.key;
  const dagre = useDagre();
  const geometry = useMemo(
    () =>
      selected && dagre ? runLayout(dagre, selected.tasks, selected.edges, selected.within, selected.boxes) : undefined,
    // The key stands for the drawn tasks and edges.
    [layoutKey, dagre],
  );
  const owners = useMemo(() => ownersOf(data?.tasks ?? []), [data]);
  // Positions from the last layout, tasks (status, title) from the latest data.
  const laid: Laid | undefined =
    geometry && selected
      ? {
          ...geometry,
          nodes: geometry.nodes.map((node, i) => ({ ...node, task: selected.tasks[i] ?? node.task })),
          hidden: selected.hidden,
          capped: selected.capped,
          counts: selected.counts,
          standFor: selected.standFor,
        }
      : undefined;
  const find = (text: string) => {
    const wanted = text.trim().toLowerCase();
    const nodes = (laid?.nodes ?? []).map((n) => n.task);
    // A task inside a collapsed box is found as that box's node.
    const byId = new Map(data?.tasks.map((task) => [task.id, task]));
    const inside = [...(laid?.standFor.keys() ?? [])].flatMap((id) => byId.get(id) ?? []);
    const hit = [nodes, inside]
      .map(
        (tasks) =>
          tasks.find((task) => task.id.toLowerCase() === wanted) ??
          tasks.find((task) => !task.id.startsWith(GROUP) && task.title.toLowerCase().includes(wanted)),
      )
      .find(Boolean);
    setMissed(hit || !wanted ? "" : text.trim());
    if (hit) setTarget((t) => ({ id: laid?.standFor.get(hit.id) ?? hit.id, n: (t?.n ?? 0) + 1 }));
  };
  return (
    <section data-view="graph" class="view">
      <div class="toolbar">
        <h1>Graph</h1>
        <FilterBar filters={filters} lists={data?.lists ?? []} owners={owners} path="/graph" />
      </div>
      <ErrorAlert error={overview.error} onReload={overview.reload} />
      {!data && !overview.error && <p class="muted">Loading…</p>}
      {data && laid && (
        <>
          <div class="graph-find">
            <search aria-label="Find a task in the graph">
              <form
                onSubmit={(event) => {
                  event.preventDefault();
                  find(new FormData(event.currentTarget).get("find")?.toString() ?? "");
                }}
              >
                <label>
                  Find <input name="find" type="search" placeholder="title or id" autocomplete="off" />
                </label>
                <button type="submit" class="quiet">
                  Centre
                </button>
              </form>
            </search>
            <label>
              Group{" "}
              <select
                value={groupBy ?? ""}
                onChange={(event) =>
                  navigate(withParams("/graph", { group: event.currentTarget.value, collapsed: "" }), true)
                }
              >
                <option value="">none</option>
                {GROUP_MODES.map((mode) => (
                  <option key={mode} value={mode}>
                    by {mode}
                  </option>
                ))}
              </select>
            </label>
            <span role="status">
              {missed ? `No task drawn here matches “${missed}”.` : ""}
              {target && !focusId && (
                <a href={withParams("/graph", { focus: target.id, depth: "" })}>
                  Only {target.id}'s blockers and dependants
                </a>
              )}
            </span>
          </div>
          {focusId && (
            <p class="graph-focus" data-focus={focusId}>
              {focusTask ? (
                <>
                  Showing <a href={`/task/${focusId}`}>{focusTask.title}</a>, its blockers and what it blocks, {depth}{" "}
                  {depth === 1 ? "level" : "levels"} each way.
                </>
              ) : (
                <>No task {focusId} in this list: showing the whole graph.</>
              )}{" "}
              {focusTask && (
                <>
                  <a href={withParams("/graph", { depth: String(depth + 1) })}>One level more</a>
                  {depth > 1 && (
                    <>
                      {" · "}
                      <a href={withParams("/graph", { depth: String(depth - 1) })}>One level less</a>
                    </>
                  )}
                  {" · "}
                </>
              )}
              <a href={withParams("/graph", { focus: "", depth: "" })}>Whole graph</a>
            </p>
          )}
          <div class="legend">
            <span>
              <span class="badge critical">critical path</span> {data.critical_path.length} tasks
            </span>
            <span>
              <span class="badge">bottleneck</span> thick, shaded: holds up the most others
            </span>
            <span class="note" data-hidden-count={laid.hidden}>
              {laid.hidden} {laid.hidden === 1 ? "task" : "tasks"} hidden (no dependency
              {laid.capped > 0 ? `, or past the first ${MAX_NODES} drawn: narrow with the filters` : ""}
              {isFilteredText(filters)})
            </span>
          </div>
          {laid.nodes.length === 0 ? (
            <p class="muted">No dependencies to draw.</p>
          ) : (
            <GraphCanvas laid={laid} overview={data} target={target} focusId={focusTask ? focusId : undefined} />
          )}
        </>
      )}
    </section>
  );
}

function isFilteredText(filters: Filters): string {
  return filters.status || filters.type || filters.owner || filters.q ? ", or filtered out" : "";
}
