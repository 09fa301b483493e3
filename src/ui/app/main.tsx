/** The dashboard's page: nav, live connection, keyboard, and the view the URL names. */
import "./app.css";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { InboxView, Me } from "../contract.js";
import { getJson } from "./api.js";
import { ErrorAlert } from "./common.js";
import { HelpPopover, installKeyboard } from "./keyboard.js";
import { startLive, useConnection, useResource } from "./live.js";
import { useNotifications } from "./notify.js";
import { FILTER_KEYS, interceptLinks, type Route, useRoute, type ViewName } from "./router.js";
import { SignIn } from "./sign-in.js";
import { adoptToken, hasToken, signOut, signsIn } from "./token.js";
import { ActivityPage } from "./views/activity.js";
import { AgentsPage } from "./views/agents.js";
import { BoardPage } from "./views/board.js";
import { GraphPage } from "./views/graph.js";
import { HomePage } from "./views/home.js";
import { InboxPage } from "./views/inbox.js";
import { TaskPage } from "./views/task.js";
import { TreePage } from "./views/tree.js";

const NAV: Array<{ view: ViewName; label: string; filtered: boolean }> = [
  { view: "home", label: "Home", filtered: false },
  { view: "board", label: "Board", filtered: true },
  { view: "tree", label: "Tree", filtered: true },
  { view: "graph", label: "Graph", filtered: true },
  { view: "agents", label: "Agents", filtered: false },
  { view: "activity", label: "Activity", filtered: true },
  { view: "inbox", label: "Inbox", filtered: false },
];

/** Board, tree, graph and activity share their filters: moving between them keeps the query. */
function navHref(view: ViewName, filtered: boolean, route: Route): string {
  if (view === "home") return "/";
  if (!filtered) return `/${view}`;
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = route.query.get(key);
    if (value) params.set(key, value);
  }
  const text = params.toString();
  return text ? `/${view}?${text}` : `/${view}`;
}

function ConnectionIndicator() {
  const state = useConnection();
  const text = state === "live" ? "live" : state === "connecting" ? "connecting…" : "offline, retrying";
  return (
    <span class={`connection ${state}`} role="status" title="Live updates from the store">
      <span class="dot" aria-hidden="true" />
      {text}
    </span>
  );
}

function App() {
  const route = useRoute();
  const me = useResource<Me>("me", () => getJson<Me>("/api/me"));
  const inbox = useResource<InboxView>("inbox", () => getJson<InboxView>("/api/inbox"));
  const [help, setHelp] = useState(false);
  const questions = inbox.data?.questions.length ?? 0;
  useNotifications(inbox.data);

  useEffect(() => installKeyboard({ toggleHelp: () => setHelp((open) => !open), closeHelp: () => setHelp(false) }), []);
  useEffect(() => {
    const names: Record<ViewName, string> = {
      home: "Home",
      board: "Board",
      tree: "Tree",
      graph: "Graph",
      task: route.taskId ?? "Task",
      agents: "Agents",
      activity: "Activity",
      inbox: "Inbox",
      missing: "Not found",
    };
    document.title = `${names[route.view]} · Arbeit`;
  }, [route.view, route.taskId]);

  // A token the server no longer takes (an earlier start of `arbeit ui`, a revoked person's token).
  if (me.error?.code === "UNAUTHORIZED") return <NoToken />;
  const active = route.view === "task" ? undefined : route.view;
  return (
    <>
      <header class="top">
        <a class="brand" href="/">
          Arbeit
        </a>
        <nav aria-label="Views">
          {NAV.map(({ view, label, filtered }) =>
            view === "inbox" ? (
              <a
                key={view}
                href={navHref(view, filtered, route)}
                aria-current={active === view ? "page" : undefined}
                aria-label={label}
                aria-describedby="inbox-count"
              >
                {label}
                <span id="inbox-count" class={questions > 0 ? "count alert-count" : "count"}>
                  {questions}
                  <span class="sr-only"> {questions === 1 ? "question" : "questions"}</span>
                </span>
              </a>
            ) : (
              <a key={view} href={navHref(view, filtered, route)} aria-current={active === view ? "page" : undefined}>
                {label}
              </a>
            ),
          )}
        </nav>
        <span class="spacer" />
        {me.data?.read_only && (
          <span
            class="badge readonly"
            title={
              signsIn()
                ? "Your token is read-only: you see everything and change nothing."
                : "This dashboard was started read-only: nothing can be changed here."
            }
          >
            read-only
          </span>
        )}
        {me.data && (
          <span class="who muted" title={`${me.data.engine}: ${me.data.location}`}>
            {me.data.agent}
          </span>
        )}
        <ConnectionIndicator />
        {signsIn() && (
          <button type="button" class="quiet" onClick={signOut}>
            Sign out
          </button>
        )}
        <button type="button" class="quiet" aria-expanded={help} aria-controls="help" onClick={() => setHelp(!help)}>
          Keyboard shortcuts
        </button>
      </header>
      {help && <HelpPopover onClose={() => setHelp(false)} />}
      <ErrorAlert error={me.error} onReload={me.reload} />
      <main id="main">
        <View route={route} me={me.data} />
      </main>
    </>
  );
}

function View({ route, me }: { route: Route; me: Me | undefined }) {
  switch (route.view) {
    case "home":
      return <HomePage me={me} />;
    case "board":
      return <BoardPage route={route} me={me} />;
    case "tree":
      return <TreePage route={route} me={me} />;
    case "graph":
      return <GraphPage route={route} />;
    case "task":
      return <TaskPage key={route.taskId} taskId={route.taskId!} me={me} />;
    case "agents":
      return <AgentsPage me={me} />;
    case "activity":
      return <ActivityPage route={route} />;
    case "inbox":
      return <InboxPage me={me} />;
    default:
      return (
        <section data-view="missing">
          <h1>Not found</h1>
          <p>
            No view here. Go to the <a href="/board">board</a>.
          </p>
        </section>
      );
  }
}

/** Shown instead of the dashboard when this browser holds no token for it. */
function Locked() {
  return (
    <main id="main">
      <section data-view="locked" class="alert" role="alert">
        <h1>
          Open the URL that <code>arbeit ui</code> printed
        </h1>
        <p>This dashboard needs its token, which comes in that URL. The browser then keeps it for this address only.</p>
      </section>
    </main>
  );
}

/** What a page without a working token shows: the sign-in form (`arbeit serve`), or where the token is (`arbeit ui`). */
const NoToken = () => (signsIn() ? <SignIn /> : <Locked />);

adoptToken();
if (hasToken()) {
  interceptLinks();
  startLive();
  render(<App />, document.getElementById("app")!);
} else render(<NoToken />, document.getElementById("app")!);
