/**
 * The board: one column per status; cards with derived ready / blocked, claims and progress.
 * With swimlanes (`?lanes=epic|parent|owner|list`), a row of columns per epic, parent, owner or
 * list; lanes a person collapses are kept in the URL (`&collapsed=<lane>,<lane>`).
 */
import { useMemo, useState } from "preact/hooks";
import { TASK_STATUSES, type TaskStatus } from "../../../domain/types.js";
import type { Me, OverviewTask } from "../../contract.js";
import { Countdown, matches, OverviewHead, ownersOf, Progress, StatusBadge, TaskBadges } from "../common.js";
import { byPriority, useOverview } from "../data.js";
import { filtersOf, navigate, type Route, withParams } from "../router.js";

/** Cards drawn per column before "Show more": a board of 10k tasks stays quick. */
const PAGE = 100;

export function TaskCard({ task }: { task: OverviewTask }) {
  return (
    <article class={`card status-${task.status}`} data-task-id={task.id}>
      <a class="title" href={`/task/${task.id}`} data-nav-item>
        {task.title}
      </a>
      <div class="meta">
        <code>{task.id}</code>
        {task.type && <span class="badge type">{task.type}</span>}
        <span class={`badge prio p${task.priority}`} title={`Priority ${task.priority} (0 highest)`}>
          P{task.priority}
        </span>
        <TaskBadges task={task} />
      </div>
      {(task.owner || task.claim) && (
        <div class="meta">
          {task.owner && <span class="owner">{task.owner}</span>}
          {task.claim && (
            <span class="claim" title={`Claimed by session ${task.claim.session}`}>
              claim <Countdown until={task.claim.until} />
            </span>
          )}
        </div>
      )}
      <Progress done={task.progress.done} total={task.progress.total} label={`Progress of ${task.id}`} />
    </article>
  );
}

function Column({ status, tasks }: { status: TaskStatus; tasks: OverviewTask[] }) {
  const [shown, setShown] = useState(PAGE);
  return (
    <section class={`column status-${status}`} data-status={status} aria-label={status.replace("_", " ")}>
      <h2>
        <StatusBadge status={status} />
        <span class="count">{tasks.length}</span>
      </h2>
      {tasks.slice(0, shown).map((task) => (
        <TaskCard key={task.id} task={task} />
      ))}
      {tasks.length > shown && (
        <button type="button" class="quiet" onClick={() => setShown(shown + PAGE * 5)}>
          Show more ({tasks.length - shown} more)
        </button>
      )}
    </section>
  );
}

const LANE_MODES = ["epic", "parent", "owner", "list"] as const;
type LaneMode = (typeof LANE_MODES)[number];

interface Lane {
  key: string;
  title: string;
  tasks: OverviewTask[];
}

/** The lane each task goes in: its nearest epic (itself, if it is one), parent, owner or list. */
function lanesOf(tasks: OverviewTask[], all: OverviewTask[], mode: LaneMode): Lane[] {
  const byId = new Map(all.map((task) => [task.id, task]));
  const epicOf = (task: OverviewTask): OverviewTask | undefined => {
    const seen = new Set<string>();
    for (let at: OverviewTask | undefined = task; at && !seen.has(at.id); at = byId.get(at.parent_id ?? "")) {
      if (at.type === "epic") return at;
      seen.add(at.id);
    }
    return undefined;
  };
  const lanes = new Map<string, Lane>();
  for (const task of tasks) {
    let key: string;
    let title: string;
    if (mode === "epic" || mode === "parent") {
      const head = mode === "epic" ? epicOf(task) : byId.get(task.parent_id ?? "");
      key = head?.id ?? "none";
      title = head?.title ?? (mode === "epic" ? "No epic" : "No parent");
    } else if (mode === "owner") {
      key = task.owner ?? "none";
      title = task.owner ?? "No owner";
    } else {
      key = task.list_id;
      title = `List ${task.list_id}`;
    }
    let lane = lanes.get(key);
    if (!lane) {
      lane = { key, title, tasks: [] };
      lanes.set(key, lane);
    }
    lane.tasks.push(task);
  }
  // Named lanes by title, the lane of tasks without one last.
  return [...lanes.values()].sort(
    (a, b) => Number(a.key === "none") - Number(b.key === "none") || a.title.localeCompare(b.title),
  );
}

/** Tasks by status, each column in the board's order. */
function byStatus(tasks: OverviewTask[]): Map<TaskStatus, OverviewTask[]> {
  const by = new Map<TaskStatus, OverviewTask[]>(TASK_STATUSES.map((status) => [status, []]));
  for (const task of tasks) by.get(task.status)?.push(task);
  for (const [status, list] of by) {
    // Finished work: the latest first.
    if (status === "completed" || status === "cancelled") list.sort((a, b) => b.updated_at.localeCompare(a.updated_at));
    else list.sort(byPriority);
  }
  return by;
}

function Swimlane({
  lane,
  statuses,
  collapsed,
  toggle,
}: {
  lane: Lane;
  statuses: readonly TaskStatus[];
  collapsed: boolean;
  toggle: () => void;
}) {
  const columns = byStatus(lane.tasks);
  const id = `lane-${lane.key}`;
  return (
    <section class="lane" aria-labelledby={id} data-lane={lane.key}>
      <h2 id={id}>
        <button type="button" class="quiet" aria-expanded={!collapsed} onClick={toggle}>
          {collapsed ? "▸" : "▾"} {lane.title}
        </button>
        <span class="count">{lane.tasks.length}</span>
        {collapsed &&
          statuses.map((status) =>
            (columns.get(status)?.length ?? 0) > 0 ? (
              <span key={status} class="muted small">
                {" "}
                {columns.get(status)!.length} {status.replace("_", " ")}
              </span>
            ) : null,
          )}
      </h2>
      {!collapsed && (
        <div class="board">
          {statuses.map((status) => (
            <Column key={status} status={status} tasks={columns.get(status) ?? []} />
          ))}
        </div>
      )}
    </section>
  );
}

export function BoardPage({ route, me }: { route: Route; me: Me | undefined }) {
  const filters = filtersOf(route.query);
  const overview = useOverview(filters.list);
  const data = overview.data;
  const mode = (LANE_MODES as readonly string[]).includes(route.query.get("lanes") ?? "")
    ? (route.query.get("lanes") as LaneMode)
    : undefined;
  const collapsed = new Set((route.query.get("collapsed") ?? "").split(",").filter(Boolean));
  // The counts in lanes and columns are of the tasks that pass the filters.
  const shown = useMemo(
    () => (data?.tasks ?? []).filter((task) => matches(task, filters)),
    [data, filters.list, filters.status, filters.type, filters.owner, filters.q],
  );
  const columns = useMemo(() => byStatus(shown), [shown]);
  const lanes = useMemo(() => (mode && data ? lanesOf(shown, data.tasks, mode) : []), [shown, data, mode]);
  const owners = useMemo(() => ownersOf(data?.tasks ?? []), [data]);
  const statuses = TASK_STATUSES.filter((status) => !filters.status || filters.status === status);
  const toggle = (key: string) => {
    const next = new Set(collapsed);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    navigate(withParams("/board", { collapsed: [...next].join(",") }), true);
  };
  return (
    <section data-view="board" class="view">
      <OverviewHead title="Board" path="/board" filters={filters} overview={overview} owners={owners} me={me} />
      <div class="toolbar">
        <label>
          Swimlanes{" "}
          <select
            value={mode ?? ""}
            onChange={(event) =>
              navigate(withParams("/board", { lanes: event.currentTarget.value, collapsed: "" }), true)
            }
          >
            <option value="">none</option>
            {LANE_MODES.map((lane) => (
              <option key={lane} value={lane}>
                by {lane}
              </option>
            ))}
          </select>
        </label>
      </div>
      {data && !mode && (
        <div class="board">
          {statuses.map((status) => (
            <Column key={status} status={status} tasks={columns.get(status) ?? []} />
          ))}
        </div>
      )}
      {data &&
        mode &&
        lanes.map((lane) => (
          <Swimlane
            key={lane.key}
            lane={lane}
            statuses={statuses}
            collapsed={collapsed.has(lane.key)}
            toggle={() => toggle(lane.key)}
          />
        ))}
    </section>
  );
}
