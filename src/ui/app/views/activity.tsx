/**
 * The event log, newest first, searched on the server over the whole history: text, task, agent,
 * session, event type and time, all kept in the URL. "Older" pages back with the server's cursor;
 * live changes bring the newest page in again.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { EVENT_TYPES, HOST_EVENT_TYPES } from "../../../domain/types.js";
import type { ActivityView, ArbeitEvent } from "../../contract.js";
import { getJson } from "../api.js";
import { ErrorAlert, When } from "../common.js";
import { useResource } from "../live.js";
import { navigate, type Route } from "../router.js";

const PAGE = 100;

/** The activity filters, as the URL and /api/activity name them. */
const KEYS = ["q", "task", "agent", "session", "event", "from", "to"] as const;
type Key = (typeof KEYS)[number];
type Search = Record<Key, string>;

function searchOf(query: URLSearchParams): Search {
  return Object.fromEntries(KEYS.map((key) => [key, query.get(key) ?? ""])) as Search;
}

function queryOf(search: Search, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const key of KEYS) if (search[key]) params.set(key, search[key]);
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params.toString();
}

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

/** A text filter that replaces the URL once typing pauses, not at every key. */
function TextFilter({
  label,
  value,
  set,
  id,
  placeholder,
}: {
  label: string;
  value: string;
  set: (value: string) => void;
  id?: string;
  placeholder?: string;
}) {
  const [text, setText] = useState(value);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => setText(value), [value]);
  useEffect(() => () => clearTimeout(timer.current), []);
  return (
    <label>
      {label}
      <input
        id={id}
        type="search"
        placeholder={placeholder}
        value={text}
        onInput={(event) => {
          const next = event.currentTarget.value;
          setText(next);
          clearTimeout(timer.current);
          timer.current = setTimeout(() => set(next.trim()), 250);
        }}
      />
    </label>
  );
}

function SearchBar({ search }: { search: Search }) {
  const set = (key: Key, value: string) => {
    const query = queryOf({ ...search, [key]: value });
    navigate(`/activity${query ? `?${query}` : ""}`, true);
  };
  const filtered = KEYS.some((key) => search[key] !== "");
  return (
    <form class="filters" aria-label="Search the activity" onSubmit={(event) => event.preventDefault()}>
      <TextFilter
        label="Search"
        id="filter-q"
        placeholder="text in any event  ( / )"
        value={search.q}
        set={(v) => set("q", v)}
      />
      <TextFilter label="Task" placeholder="tkt-…" value={search.task} set={(v) => set("task", v)} />
      <TextFilter label="Agent" value={search.agent} set={(v) => set("agent", v)} />
      <TextFilter label="Session" value={search.session} set={(v) => set("session", v)} />
      <label>
        Event
        <select value={search.event} onChange={(event) => set("event", event.currentTarget.value)}>
          <option value="">any event</option>
          {[...EVENT_TYPES, ...HOST_EVENT_TYPES].map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
      </label>
      <label>
        From
        <input type="date" value={search.from} onChange={(event) => set("from", event.currentTarget.value)} />
      </label>
      <label>
        Before
        <input type="date" value={search.to} onChange={(event) => set("to", event.currentTarget.value)} />
      </label>
      {filtered && (
        <button type="button" class="quiet" onClick={() => navigate("/activity", true)}>
          Clear filters
        </button>
      )}
    </form>
  );
}

export function ActivityPage({ route }: { route: Route }) {
  const search = searchOf(route.query);
  const filters = queryOf(search);
  const newest = useResource(`activity:${filters}`, () =>
    getJson<ActivityView>(`/api/activity?${queryOf(search, { limit: String(PAGE) })}`),
  );
  // Older pages of this search, loaded with the cursor of the page before.
  const [older, setOlder] = useState<{ filters: string; pages: ActivityView[] }>({ filters, pages: [] });
  const [olderError, setOlderError] = useState<{ code: string; message: string }>();
  const [loadingOlder, setLoadingOlder] = useState(false);
  const pages = older.filters === filters ? older.pages : [];
  const seen = new Set<number>();
  const events: ArbeitEvent[] = [];
  const titles: Record<string, string> = {};
  for (const page of [newest.data, ...pages]) {
    if (!page) continue;
    Object.assign(titles, page.titles);
    for (const event of page.events) {
      if (seen.has(event.seq)) continue;
      seen.add(event.seq);
      events.push(event);
    }
  }
  events.sort((a, b) => b.seq - a.seq);
  const next = pages.length > 0 ? pages.at(-1)!.next_before : (newest.data?.next_before ?? null);
  const loadOlder = async () => {
    if (next === null) return;
    setLoadingOlder(true);
    setOlderError(undefined);
    try {
      const page = await getJson<ActivityView>(
        `/api/activity?${queryOf(search, { before: String(next), limit: String(PAGE) })}`,
      );
      setOlder({ filters, pages: [...pages, page] });
    } catch (error) {
      setOlderError({ code: "ERROR", message: error instanceof Error ? error.message : String(error) });
    } finally {
      setLoadingOlder(false);
    }
  };
  return (
    <section data-view="activity" class="view">
      <div class="toolbar">
        <h1>Activity</h1>
        <SearchBar search={search} />
      </div>
      <ErrorAlert error={newest.error} onReload={newest.reload} />
      {!newest.data && !newest.error && <p class="muted">Loading…</p>}
      {newest.data && events.length === 0 && <p class="muted">No events{filters ? " match the search" : ""}.</p>}
      <ol class="plain-list events">
        {events.map((event) => (
          <li key={event.seq} data-seq={event.seq} data-task-id={event.task_id ?? undefined}>
            <span class="seq">#{event.seq}</span>
            <When at={event.timestamp} />
            <strong>{event.event_type}</strong>
            {event.task_id && (
              <a href={`/task/${event.task_id}`} data-nav-item>
                {titles[event.task_id] ?? event.task_id}
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
