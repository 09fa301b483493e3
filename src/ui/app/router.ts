/** Client-side routing: every view has its own URL; history.pushState moves between them. */
import { useEffect, useState } from "preact/hooks";

export type ViewName = "home" | "board" | "tree" | "graph" | "task" | "agents" | "activity" | "inbox" | "missing";

export interface Route {
  view: ViewName;
  /** The task of /task/<id>. */
  taskId?: string;
  query: URLSearchParams;
}

export function parseRoute(location: { pathname: string; search: string }): Route {
  const query = new URLSearchParams(location.search);
  const path = location.pathname.replace(/\/+$/, "") || "/";
  const task = /^\/task\/([^/]+)$/.exec(path);
  if (task) return { view: "task", taskId: decodeURIComponent(task[1]!), query };
  if (path === "/") return { view: "home", query };
  const name = path.slice(1);
  if (["board", "tree", "graph", "agents", "activity", "inbox"].includes(name))
    return { view: name as ViewName, query };
  return { view: "missing", query };
}

const listeners = new Set<() => void>();

export function navigate(url: string, replace = false): void {
  const target = new URL(url, location.href);
  if (target.origin !== location.origin) return;
  const same = target.pathname === location.pathname && target.search === location.search;
  if (replace || same) history.replaceState(null, "", target.pathname + target.search + target.hash);
  else history.pushState(null, "", target.pathname + target.search + target.hash);
  if (!same || replace) window.scrollTo(0, 0);
  for (const listener of listeners) listener();
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location));
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return route;
}

/** Links inside the page go through the router, not a page load. */
export function interceptLinks(): void {
  document.addEventListener("click", (event) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || anchor.hasAttribute("download") || anchor.getAttribute("target")) return;
    const href = anchor.getAttribute("href");
    if (!href?.startsWith("/")) return;
    event.preventDefault();
    navigate(href);
  });
}

/** The filters kept in the URL query (board, tree, graph, activity). */
export interface Filters {
  list: string;
  status: string;
  type: string;
  owner: string;
  q: string;
}

export const FILTER_KEYS = ["list", "status", "type", "owner", "q"] as const;

export function filtersOf(query: URLSearchParams): Filters {
  return {
    list: query.get("list") ?? "",
    status: query.get("status") ?? "",
    type: query.get("type") ?? "",
    owner: query.get("owner") ?? "",
    q: query.get("q") ?? "",
  };
}

/**
 * The URL of `path` with the current query, some of its settings replaced (an empty value
 * removes one): a filter or a board setting changes only itself.
 */
export function withParams(path: string, changes: Record<string, string>): string {
  const params = new URLSearchParams(location.search);
  for (const [name, value] of Object.entries(changes)) {
    if (value) params.set(name, value);
    else params.delete(name);
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
