/** The board: one column per status; cards with derived ready / blocked, claims and progress. */
import { useMemo, useState } from "preact/hooks";
import { TASK_STATUSES, type TaskStatus } from "../../../domain/types.js";
import type { Me, OverviewTask } from "../../contract.js";
import { Countdown, matches, OverviewHead, ownersOf, Progress, StatusBadge, TaskBadges } from "../common.js";
import { byPriority, useOverview } from "../data.js";
import { filtersOf, type Route } from "../router.js";

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

export function BoardPage({ route, me }: { route: Route; me: Me | undefined }) {
  const filters = filtersOf(route.query);
  const overview = useOverview(filters.list);
  const data = overview.data;
  const columns = useMemo(() => {
    const by = new Map<TaskStatus, OverviewTask[]>(TASK_STATUSES.map((status) => [status, []]));
    for (const task of data?.tasks ?? []) if (matches(task, filters)) by.get(task.status)?.push(task);
    for (const [status, tasks] of by) {
      // Finished work: the latest first.
      if (status === "completed" || status === "cancelled")
        tasks.sort((a, b) => b.updated_at.localeCompare(a.updated_at));
      else tasks.sort(byPriority);
    }
    return by;
  }, [data, filters.list, filters.status, filters.type, filters.owner, filters.q]);
  const owners = useMemo(() => ownersOf(data?.tasks ?? []), [data]);
  return (
    <section data-view="board" class="view">
      <OverviewHead title="Board" path="/board" filters={filters} overview={overview} owners={owners} me={me} />
      {data && (
        <div class="board">
          {TASK_STATUSES.filter((status) => !filters.status || filters.status === status).map((status) => (
            <Column key={status} status={status} tasks={columns.get(status) ?? []} />
          ))}
        </div>
      )}
    </section>
  );
}
