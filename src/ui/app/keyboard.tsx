/** Keyboard navigation: `g` + a letter switches views, `/` searches, j/k and arrows move, Esc goes back. */
import { useEffect, useRef } from "preact/hooks";
import { navigate } from "./router.js";

const GO: Record<string, string> = {
  h: "/",
  b: "/board",
  t: "/tree",
  g: "/graph",
  a: "/agents",
  v: "/activity",
  i: "/inbox",
};

export const KEYS: Array<[string, string]> = [
  ["g h", "Home"],
  ["g b", "Board"],
  ["g t", "Tree"],
  ["g g", "Graph"],
  ["g a", "Agents"],
  ["g v", "Activity"],
  ["g i", "Inbox"],
  ["/", "Focus the search filter"],
  ["j / ↓", "Next card or row"],
  ["k / ↑", "Previous card or row"],
  ["Enter", "Open the focused task"],
  ["Esc", "Close this help, leave a field, or go back from a task"],
  ["?", "Show or hide this help"],
];

function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}

/** Moves focus to the next (+1) or previous (-1) task in the current view. */
function move(step: number): boolean {
  const items = [...document.querySelectorAll<HTMLElement>("main [data-nav-item]")].filter(
    (item) => item.getClientRects().length > 0,
  );
  if (items.length === 0) return false;
  const index = items.indexOf(document.activeElement as HTMLElement);
  const next = index < 0 ? (step > 0 ? 0 : items.length - 1) : Math.min(items.length - 1, Math.max(0, index + step));
  items[next]!.focus();
  items[next]!.scrollIntoView({ block: "nearest" });
  return true;
}

export function installKeyboard(actions: { toggleHelp: () => void; closeHelp: () => void }): () => void {
  let pendingG = 0;
  const onKey = (event: KeyboardEvent) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape") {
      // Esc closes the help and does nothing else: it must not also take the person back a page.
      if (document.getElementById("help")) {
        actions.closeHelp();
        return;
      }
      if (typing(event.target)) {
        (event.target as HTMLElement).blur();
        return;
      }
      const open = document.querySelector<HTMLDetailsElement>("details[open]");
      if (open) {
        open.open = false;
        return;
      }
      if (location.pathname.startsWith("/task/")) {
        if (history.length > 1) history.back();
        else navigate("/");
      }
      return;
    }
    if (typing(event.target)) return;
    const now = Date.now();
    if (pendingG && now - pendingG < 1500 && GO[event.key]) {
      pendingG = 0;
      event.preventDefault();
      const path = GO[event.key]!;
      // Board, tree, graph and activity keep the filters.
      const keep = ["/board", "/tree", "/graph", "/activity"];
      const here = location.pathname;
      navigate(keep.includes(path) && keep.includes(here) ? path + location.search : path);
      return;
    }
    pendingG = 0;
    switch (event.key) {
      case "g":
        pendingG = now;
        return;
      case "/": {
        const search = document.getElementById("filter-q");
        if (search) {
          event.preventDefault();
          search.focus();
        }
        return;
      }
      case "?":
        event.preventDefault();
        actions.toggleHelp();
        return;
      case "j":
      case "ArrowDown":
        if (move(1)) event.preventDefault();
        return;
      case "k":
      case "ArrowUp":
        if (move(-1)) event.preventDefault();
        return;
    }
  };
  document.addEventListener("keydown", onKey);
  return () => document.removeEventListener("keydown", onKey);
}

export function HelpPopover({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div id="help" class="help" role="dialog" aria-label="Keyboard shortcuts" tabIndex={-1} ref={ref}>
      <h2>Keyboard shortcuts</h2>
      <dl>
        {KEYS.map(([key, what]) => (
          <div key={key}>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </div>
  );
}
