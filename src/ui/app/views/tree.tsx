/** The hierarchy (parent_id), collapsible, with progress rolled up from the leaves. */
import { useMemo, useState } from "preact/hooks";
import type { Me, OverviewTask } from "../../contract.js";
import { isFiltered, matches, OverviewHead, ownersOf, Progress, StatusBadge, TaskBadges } from "../common.js";
import { byPriority, useOverview } from "../data.js";
import { filtersOf, type Route } from "../router.js";

interface Node {
  task: OverviewTask;
  children: Node[];
  /** Finished leaves below (a leaf with progress items counts its items instead). */
  done: number;
  total: number;
}

/** Past this many tasks, the tree opens collapsed (roots only). */
const OPEN_ALL_UP_TO = 300;

function buildTree(tasks: OverviewTask[], keep: (task: OverviewTask) => boolean): Node[] {
  const byId = new Map(tasks.map((task) => [task.id, task]));
  // What is shown: the tasks that pass the filters, and their ancestors (to place them).
  const shown = new Set<string>();
  for (const task of tasks) {
    if (!keep(task)) continue;
    let at: OverviewTask | undefined = task;
    while (at && !shown.has(at.id)) {
      shown.add(at.id);
      at = at.parent_id ? byId.get(at.parent_id) : undefined;
    }
  }
  const nodes = new Map<string, Node>();
  for (const id of shown) nodes.set(id, { task: byId.get(id)!, children: [], done: 0, total: 0 });
  const roots: Node[] = [];
  for (const node of nodes.values()) {
    const parent = node.task.parent_id ? nodes.get(node.task.parent_id) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  const roll = (node: Node): void => {
    node.children.sort((a, b) => byPriority(a.task, b.task));
    if (node.children.length === 0) {
      const { done, total } = node.task.progress;
      if (total > 0) {
        node.done = done;
        node.total = total;
      } else if (node.task.status !== "cancelled") {
        node.done = node.task.status === "completed" ? 1 : 0;
        node.total = 1;
      }
      return;
    }
    for (const child of node.children) {
      roll(child);
      if (child.children.length === 0) {
        // A leaf counts once: done when completed (its own items only show beside it).
        if (child.task.status === "cancelled") continue;
        node.total += 1;
        if (child.task.status === "completed") node.done += 1;
      } else {
        node.done += child.done;
        node.total += child.total;
      }
    }
  };
  roots.sort((a, b) => byPriority(a.task, b.task));
  for (const root of roots) roll(root);
  return roots;
}

function TreeRow({
  node,
  depth,
  collapsed,
  toggle,
}: {
  node: Node;
  depth: number;
  collapsed: (id: string, depth: number) => boolean;
  toggle: (id: string, depth: number) => void;
}) {
  const { task } = node;
  const hasChildren = node.children.length > 0;
  const closed = hasChildren && collapsed(task.id, depth);
  return (
    <li data-task-id={task.id}>
      <div class={`row status-${task.status}`}>
        {hasChildren ? (
          <button
            type="button"
            class="toggle"
            aria-label={`${closed ? "Expand" : "Collapse"} ${task.id}`}
            aria-expanded={!closed}
            onClick={() => toggle(task.id, depth)}
          >
            {closed ? "▸" : "▾"}
          </button>
        ) : (
          <span class="toggle" aria-hidden="true" />
        )}
        <StatusBadge status={task.status} />
        <a href={`/task/${task.id}`} data-nav-item class="title">
          {task.title}
        </a>
        <code class="muted">{task.id}</code>
        {task.type && <span class="badge type">{task.type}</span>}
        <TaskBadges task={task} />
        {task.owner && <span class="owner">{task.owner}</span>}
        <span class="spacer" />
        <Progress done={node.done} total={node.total} label={`Progress of ${task.id}`} />
        {hasChildren && <span class="muted small">{node.children.length} below</span>}
      </div>
      {hasChildren && !closed && (
        <ul>
          {node.children.map((child) => (
            <TreeRow key={child.task.id} node={child} depth={depth + 1} collapsed={collapsed} toggle={toggle} />
          ))}
        </ul>
      )}
    </li>
  );
}

export function TreePage({ route, me }: { route: Route; me: Me | undefined }) {
  const filters = filtersOf(route.query);
  const overview = useOverview(filters.list);
  const data = overview.data;
  const roots = useMemo(
    () => buildTree(data?.tasks ?? [], (task) => matches(task, filters)),
    [data, filters.list, filters.status, filters.type, filters.owner, filters.q],
  );
  const owners = useMemo(() => ownersOf(data?.tasks ?? []), [data]);
  // Toggled rows differ from the default (open when the tree is small or a filter narrows it).
  const [toggled, setToggled] = useState<Set<string>>(new Set());
  const openByDefault = (depth: number) =>
    depth === 0
      ? (data?.tasks.length ?? 0) <= OPEN_ALL_UP_TO * 10
      : (data?.tasks.length ?? 0) <= OPEN_ALL_UP_TO || isFiltered(filters);
  const collapsed = (id: string, depth: number) => openByDefault(depth) === toggled.has(id);
  const toggle = (id: string) => {
    const next = new Set(toggled);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setToggled(next);
  };
  return (
    <section data-view="tree" class="view">
      <OverviewHead title="Tree" path="/tree" filters={filters} overview={overview} owners={owners} me={me} />
      {data && roots.length === 0 && <p class="muted">No tasks{isFiltered(filters) ? " match the filters" : ""}.</p>}
      {data && roots.length > 0 && (
        <ul class="tree" aria-label="Task hierarchy">
          {roots.map((node) => (
            <TreeRow key={node.task.id} node={node} depth={0} collapsed={collapsed} toggle={toggle} />
          ))}
        </ul>
      )}
    </section>
  );
}
