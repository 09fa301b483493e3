/** The event stream, newest first; "Older" pages back. Live changes bring the newest page in again. */
import { useMemo, useState } from "preact/hooks";
import type { ActivityView, ArbeitEvent, OverviewTask } from "../../contract.js";
import { getJson } from "../api.js";
import { ErrorAlert, FilterBar, isFiltered, When } from "../common.js";
import { useOverview } from "../data.js";
import { useResource } from "../live.js";
import { type Filters, filtersOf, type Route } from "../router.js";

const PAGE = 100;

/** What a task is called in an event that carries the whole task (created, deleted). */
function taskTitle(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const title = (value as { title?: unknown }).title;
  return typeof title === "string" ? title : undefined;
}

function payloadText(event: ArbeitEvent): string {
  const payload = event.payload ?? {};
  // A whole task in the payload reads best as its title; its fields are on the task's page.
  const title = taskTitle(payload.task);
  if (title !== undefined) return `"${title}"`;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(payload)) {
    if (value === null || value === undefined) continue;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`${key}: ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`);
    if (parts.length >= 4) break;
  }
  return parts.join(" · ");
}

function passes(event: ArbeitEvent, filters: Filters, tasks: Map<string, OverviewTask> | undefined): boolean {
  const task = event.task_id ? tasks?.get(event.task_id) : undefined;
  if (filters.owner && event.agent !== filters.owner && task?.owner !== filters.owner) return false;
  if ((filters.list || filters.status || filters.type) && tasks) {
    if (!task) return false;
    if (filters.list && task.list_id !== filters.list) return false;
    if (filters.status && task.status !== filters.status) return false;
    if (filters.type && (task.type ?? "none") !== filters.type) return false;
  }
  if (filters.q) {
    const q = filters.q.toLowerCase();
    const hay = [event.event_type, event.task_id ?? "", event.agent ?? "", task?.title ?? "", event.entity_id]
      .join(" ")
      .toLowerCase();
    if (!hay.includes(q)) return false;
  }
  return true;
}

export function ActivityPage({ route }: { route: Route }) {
  const filters = filtersOf(route.query);
  const newest = useResource("activity", () => getJson<ActivityView>(`/api/activity?limit=${PAGE}`));
  const [older, setOlder] = useState<{ events: ArbeitEvent[]; next: number | null } | null>(null);
  const [olderError, setOlderError] = useState<{ code: string; message: string }>();
  const [loadingOlder, setLoadingOlder] = useState(false);
  // Tasks (for list, status, type and owner filters and titles): the overview, only when a filter needs it.
  const needTasks = Boolean(filters.list || filters.status || filters.type || filters.q || filters.owner);
  const overview = useOverview(filters.list, needTasks);
  const tasks = useMemo(
    () => (needTasks && overview.data ? new Map(overview.data.tasks.map((task) => [task.id, task])) : undefined),
    [needTasks, overview.data],
  );
  const events = useMemo(() => {
    const seen = new Set<number>();
    const out: ArbeitEvent[] = [];
    for (const event of [...(newest.data?.events ?? []), ...(older?.events ?? [])]) {
      if (seen.has(event.seq)) continue;
      seen.add(event.seq);
      out.push(event);
    }
    return out.sort((a, b) => b.seq - a.seq);
  }, [newest.data, older]);
  const shown = events.filter((event) => passes(event, filters, tasks));
  const next = older ? older.next : (newest.data?.next_before ?? null);
  const loadOlder = async () => {
    if (next === null) return;
    setLoadingOlder(true);
    setOlderError(undefined);
    try {
      const page = await getJson<ActivityView>(`/api/activity?before=${next}&limit=${PAGE}`);
      setOlder({ events: [...(older?.events ?? []), ...page.events], next: page.next_before });
    } catch (error) {
      setOlderError({ code: "ERROR", message: error instanceof Error ? error.message : String(error) });
    } finally {
      setLoadingOlder(false);
    }
  };
  const lists = overview.data?.lists ?? [];
  const owners = useMemo(() => {
    const set = new Set<string>();
    for (const event of events) if (event.agent) set.add(event.agent);
    return [...set].sort();
  }, [events]);
  return (
    <section data-view="activity" class="view">
      <div class="toolbar">
        <h1>Activity</h1>
        <FilterBar filters={filters} lists={lists} owners={owners} path="/activity" />
      </div>
      <ErrorAlert error={newest.error} onReload={newest.reload} />
      {!newest.data && !newest.error && <p class="muted">Loading…</p>}
      {newest.data && shown.length === 0 && (
        <p class="muted">No events{isFiltered(filters) ? " match the filters (in what is loaded)" : ""}.</p>
      )}
      <ol class="plain-list events">
        {shown.map((event) => (
          <li key={event.seq} data-seq={event.seq} data-task-id={event.task_id ?? undefined}>
            <span class="seq">#{event.seq}</span>
            <When at={event.timestamp} />
            <strong>{event.event_type}</strong>
            {event.task_id && (
              <a href={`/task/${event.task_id}`} data-nav-item>
                {tasks?.get(event.task_id)?.title ?? event.task_id}
              </a>
            )}
            {event.agent && <span class="owner">{event.agent}</span>}
            {event.session_id && <code class="muted small">{event.session_id}</code>}
            <span class="payload">{payloadText(event)}</span>
          </li>
        ))}
      </ol>
      <ErrorAlert error={olderError} onDismiss={() => setOlderError(undefined)} />
      {next !== null && newest.data && (
        <button type="button" class="quiet" disabled={loadingOlder} onClick={loadOlder}>
          Older
        </button>
      )}
    </section>
  );
}
