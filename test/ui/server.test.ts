import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { type Dashboard, type Engine, startDashboard, type UiProject, uiProject } from "./harness.js";

/** One HTTP request with exactly these headers (fetch would not let a test forge Host). */
function http(
  dashboard: Dashboard,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; auth?: boolean } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string; json: any }> {
  const url = new URL(path, dashboard.origin);
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.auth ?? true) headers.Authorization ??= `Bearer ${dashboard.token}`;
  if (options.body !== undefined) headers["Content-Type"] ??= "application/json";
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => {
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
      });
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const post = (dashboard: Dashboard, tool: string, args: unknown, headers: Record<string, string> = {}) =>
  http(dashboard, `/api/tools/${tool}`, {
    method: "POST",
    body: JSON.stringify(args),
    headers: { Origin: dashboard.origin, ...headers },
  });

/** Resolves with the first `change` the live feed reports whose seq passes `test`. */
function nextChange(dashboard: Dashboard, test: (seq: number) => boolean): { seen: Promise<number>; close(): void } {
  const req = request(new URL("/api/live", dashboard.origin), {
    headers: { Authorization: `Bearer ${dashboard.token}` },
  });
  const seen = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no change reported within 10 s")), 10_000);
    req.on("response", (res) => {
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        buffer += chunk;
        for (const match of buffer.matchAll(/event: change\ndata: (\{[^\n]*\})\n\n/g)) {
          const seq = JSON.parse(match[1]!).seq as number;
          if (test(seq)) {
            clearTimeout(timer);
            resolve(seq);
          }
        }
      });
    });
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  req.end();
  return { seen, close: () => req.destroy() };
}

function dashboardSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let taskId: string;

  before(async () => {
    project = await uiProject(engine);
    taskId = (await project.cli(["task", "create", "--title", "Write the parser"])).task.id;
    dashboard = await startDashboard(project.dir, { env: project.env, args: ["--as", "alice"] });
  });
  after(async () => {
    await dashboard?.stop();
    await project?.close();
  });

  it("prints a loopback URL that carries the token in its fragment, which browsers never send", () => {
    assert.match(dashboard.url, /^http:\/\/127\.0\.0\.1:\d+\/#token=arbui_[\w-]{43}$/);
  });

  it("refuses every API request and the live stream without the token, or with a wrong one", async () => {
    for (const path of [
      "/api/me",
      "/api/overview",
      "/api/agents",
      "/api/inbox",
      "/api/activity",
      "/api/home",
      "/api/live",
      "/api/nothing",
    ]) {
      const bare = await http(dashboard, path, { auth: false });
      assert.equal(bare.status, 401, path);
      assert.equal(bare.json.error.code, "UNAUTHORIZED");
      const wrong = await http(dashboard, path, { headers: { Authorization: `Bearer ${"x".repeat(32)}` } });
      assert.equal(wrong.status, 401, path);
    }
    const write = await http(dashboard, "/api/tools/arbeit_task_create", {
      method: "POST",
      auth: false,
      body: JSON.stringify({ title: "Planted without a token" }),
      headers: { Origin: dashboard.origin },
    });
    assert.equal(write.status, 401);
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.ok(!titles.includes("Planted without a token"));
  });

  it("serves the page and its assets without the token: they hold no data", async () => {
    for (const path of ["/", "/board", `/task/${taskId}`, "/assets/app.js", "/assets/app.css"]) {
      const answer = await http(dashboard, path, { auth: false });
      assert.equal(answer.status, 200, path);
      assert.equal(answer.headers["set-cookie"], undefined, path);
      assert.ok(!answer.body.includes("Write the parser"), `${path} holds no task data`);
    }
    const page = await http(dashboard, "/graph?list=default", { auth: false });
    assert.match(page.body, /<div id="app"><\/div>/);
    assert.match(String(page.headers["content-security-policy"]), /default-src 'none'; script-src 'self'/);
  });

  it("sets no cookie, and takes the token from no cookie and no query: only from the Authorization header", async () => {
    const port = new URL(dashboard.origin).port;
    const visit = await http(dashboard, `/board?token=${dashboard.token}`, { auth: false });
    assert.equal(visit.status, 200);
    assert.equal(visit.headers["set-cookie"], undefined);
    const oldCookie = await http(dashboard, "/api/me", {
      auth: false,
      headers: { Cookie: `arbeit_token_${port}=${dashboard.token}` },
    });
    assert.equal(oldCookie.status, 401);
    assert.equal(oldCookie.json.error.code, "UNAUTHORIZED");
    const query = await http(dashboard, `/api/me?token=${dashboard.token}`, { auth: false });
    assert.equal(query.status, 401);
    const header = await http(dashboard, "/api/me");
    assert.equal(header.status, 200);
    assert.equal(header.headers["set-cookie"], undefined);
  });

  it("refuses a request whose Host is not its own, token or not (DNS rebinding)", async () => {
    const rebound = await http(dashboard, "/api/overview", {
      headers: { Host: `attacker.example:${new URL(dashboard.origin).port}` },
    });
    assert.equal(rebound.status, 403);
    assert.equal(rebound.json.error.code, "FORBIDDEN_HOST");
    const localhost = await http(dashboard, "/api/me", {
      headers: { Host: `localhost:${new URL(dashboard.origin).port}` },
    });
    assert.equal(localhost.status, 200);
  });

  it("refuses a write from a foreign Origin and writes nothing", async () => {
    const refused = await post(
      dashboard,
      "arbeit_task_create",
      { title: "Planted" },
      { Origin: "http://attacker.example" },
    );
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, "FORBIDDEN_ORIGIN");
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.ok(!titles.includes("Planted"));
  });

  it("makes an edit through the tool, as human:<name>, and `arbeit task get` shows it", async () => {
    const edited = await post(dashboard, "arbeit_task_update", {
      task_id: taskId,
      title: "Write the lexer",
      expected_version: 1,
    });
    assert.equal(edited.status, 200);
    assert.equal(edited.json.success, true, JSON.stringify(edited.json));
    const seen = await project.cli(["task", "get", taskId, "--include", "recent_events"]);
    assert.equal(seen.task.title, "Write the lexer");
    assert.equal(seen.recent_events.at(-1).agent, "human:alice");
  });

  it("reports a stale version as VERSION_CONFLICT with the current version, and changes nothing", async () => {
    const stale = await post(dashboard, "arbeit_task_update", {
      task_id: taskId,
      title: "Overwritten",
      expected_version: 1,
    });
    assert.equal(stale.json.success, false);
    assert.equal(stale.json.error.code, "VERSION_CONFLICT");
    assert.equal((await project.cli(["task", "get", taskId])).task.title, "Write the lexer");
  });

  it("answers a bad request with a structured error", async () => {
    const notJson = await http(dashboard, "/api/tools/arbeit_task_create", {
      method: "POST",
      body: "{title",
      headers: { Origin: dashboard.origin },
    });
    assert.equal(notJson.status, 400);
    assert.equal(notJson.json.error.code, "INVALID_ARGUMENT");
    const schema = await post(dashboard, "arbeit_task_create", { title: 7 });
    assert.equal(schema.json.error.code, "INVALID_ARGUMENT");
    const unknown = await post(dashboard, "arbeit_nothing", {});
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, "NOT_FOUND");
    const form = await http(dashboard, "/api/tools/arbeit_task_create", {
      method: "POST",
      body: "title=Planted",
      headers: { Origin: dashboard.origin, "Content-Type": "application/x-www-form-urlencoded" },
    });
    assert.equal(form.status, 415);
  });

  it("tells every open page when another process changes the store", async () => {
    const { seq } = (await http(dashboard, "/api/me")).json.data;
    const pages = [0, 1, 2].map(() => nextChange(dashboard, (next) => next > seq));
    try {
      await project.cli(["task", "create", "--title", "Made elsewhere"]);
      const seen = await Promise.all(pages.map((page) => page.seen));
      for (const next of seen) assert.ok(next > seq);
    } finally {
      for (const page of pages) page.close();
    }
    const overview = (await http(dashboard, "/api/overview")).json.data;
    assert.ok(overview.tasks.some((task: { title: string }) => task.title === "Made elsewhere"));
  });

  it("agents, inbox and activity: who works on what, the open questions, the event stream a page at a time", async () => {
    const as = ["--session", "ses-worker-1", "--agent", "claude-code"];
    const task = (await project.cli(["task", "create", "--title", "Port the tokenizer", ...as])).task.id;
    await project.cli(["task", "start-work", task, ...as]);
    const asked = (await project.cli(["context", "add", task, "blocker", "Keep the old API?", ...as])).entry.id;

    const agents = (await http(dashboard, "/api/agents")).json.data;
    const worker = agents.sessions.find((entry: { session_id: string }) => entry.session_id === "ses-worker-1");
    assert.equal(worker.agent, "claude-code");
    assert.equal(worker.working.task_id, task);
    assert.deepEqual(
      worker.claims.map((claim: { task_id: string }) => claim.task_id),
      [task],
    );
    assert.ok(Date.parse(worker.claims[0].until) > Date.parse(agents.now), "the lease is live");
    assert.equal(worker.last_activity.event_type, "context_added");
    assert.deepEqual(agents.stale_claims, []);

    const inbox = (await http(dashboard, "/api/inbox")).json.data;
    const question = inbox.questions.find((entry: { entry: { id: string } }) => entry.entry.id === asked);
    assert.equal(question.entry.content, "Keep the old API?");
    assert.deepEqual(question.asked_by, { agent: "claude-code", session: "ses-worker-1" });
    assert.deepEqual(question.working, ["ses-worker-1"]);
    assert.equal(question.task.title, "Port the tokenizer");

    const newest = (await http(dashboard, "/api/activity?limit=2")).json.data;
    assert.deepEqual(
      newest.events.map((event: { event_type: string }) => event.event_type),
      ["context_added", "work_started"],
    );
    assert.equal(newest.next_before, newest.events[1].seq);
    const older = (await http(dashboard, `/api/activity?limit=2&before=${newest.next_before}`)).json.data;
    assert.ok(older.events.every((event: { seq: number }) => event.seq < newest.next_before));
    assert.equal((await http(dashboard, "/api/activity?before=-1")).json.error.code, "INVALID_ARGUMENT");
    // Every view says which change it includes, read with it: the page reloads only for newer ones.
    for (const view of [agents, inbox, newest]) assert.equal(view.seq, newest.events[0].seq);
  });

  it("activity search: filters by session, agent, event types, time and literal text, on the server", async () => {
    const as = ["--session", "ses-search-1", "--agent", "searcher"];
    const task = (await project.cli(["task", "create", "--title", "Cut 100% of the fees_now", ...as])).task.id;
    await project.cli(["context", "add", task, "decision", "Keep fees", ...as]);
    const search = async (query: string) => (await http(dashboard, `/api/activity?${query}`)).json.data;

    const bySession = await search("session=ses-search-1");
    assert.deepEqual(
      bySession.events.map((event: { event_type: string }) => event.event_type),
      ["context_added", "task_created"],
    );
    assert.equal(bySession.titles[task], "Cut 100% of the fees_now");
    assert.equal(bySession.next_before, null);
    const decided = await search("agent=searcher&event=context_added,task_deleted");
    assert.deepEqual(
      decided.events.map((event: { task_id: string }) => event.task_id),
      [task],
    );
    // Text is found in the payload, and in the title of the event's task (so in each of its events).
    const kept = await search("q=keep%20FEES");
    assert.deepEqual(
      kept.events.map((event: { event_type: string }) => event.event_type),
      ["context_added"],
      "case does not matter",
    );
    assert.equal((await search("q=0%25%20of%20the")).events.length, 2);
    // % and _ are literal text, not patterns.
    assert.equal((await search("q=100%25")).events.length, 2);
    assert.equal((await search("q=fees_now")).events.length, 2);
    assert.equal((await search("q=of_the")).events.length, 0);
    assert.equal((await search("q=1%25%25")).events.length, 0);
    const today = bySession.events[0].timestamp.slice(0, 10);
    const later = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
    assert.equal((await search(`session=ses-search-1&from=${today}&to=${later}`)).events.length, 2);
    assert.equal((await search(`session=ses-search-1&from=${later}`)).events.length, 0);
    const bad = await http(dashboard, "/api/activity?from=yesterday");
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, "INVALID_ARGUMENT");
  });

  it("home: questions, work now and progress in one answer, read at one seq", async () => {
    const epic = (await project.cli(["task", "create", "--title", "Home epic", "--type", "epic"])).task.id;
    const child = (await project.cli(["task", "create", "--title", "Home child", "--parent-id", epic])).task.id;
    await project.cli(["task", "create", "--title", "Home other child", "--parent-id", epic]);
    await project.cli(["context", "add", child, "blocker", "Which currency?"]);
    await project.cli(["context", "add", child, "decision", "Euros"]);
    await project.cli(["task", "update", child, "--status", "completed"]);
    const home = (await http(dashboard, "/api/home")).json.data;
    assert.equal(home.seq, (await http(dashboard, "/api/me")).json.data.seq);
    assert.ok(
      home.attention.questions.some(
        (question: { entry: { content: string } }) => question.entry.content === "Which currency?",
      ),
    );
    const progress = home.epics.find((entry: { id: string }) => entry.id === epic);
    assert.deepEqual({ done: progress.done, total: progress.total }, { done: 1, total: 2 });
    assert.equal(home.days.length, 14);
    const today = home.days.at(-1);
    assert.equal(today.day, home.now.slice(0, 10));
    assert.ok(today.completed >= 1 && today.decisions >= 1 && today.blockers >= 1, JSON.stringify(today));
  });

  it("answers `since` with only the cards that changed, their linked tasks included", async () => {
    const blocker = (await project.cli(["task", "create", "--title", "Pick a format"])).task.id;
    const waiting = (await project.cli(["task", "create", "--title", "Write the reader", "--blocked-by", blocker])).task
      .id;
    const doomed = (await project.cli(["task", "create", "--title", "Short-lived"])).task.id;
    const before = (await http(dashboard, "/api/overview")).json.data;
    assert.equal(before.tasks.find((task: { id: string }) => task.id === waiting).blocked, true);

    await project.cli(["task", "update", blocker, "--status", "cancelled"]);
    await project.cli(["task", "delete", doomed]);
    const part = (await http(dashboard, `/api/overview?since=${before.seq}`)).json.data;
    assert.equal(part.partial, true);
    // The blocker changed; the task it held up reads differently though no event names it.
    assert.deepEqual(part.tasks.map((task: { id: string }) => task.id).sort(), [blocker, waiting].sort());
    const freed = part.tasks.find((task: { id: string }) => task.id === waiting);
    assert.equal(freed.blocked, false);
    assert.equal(freed.ready, true);
    assert.deepEqual(part.removed, [doomed]);
    // Merged, it is the whole overview read now.
    const whole = (await http(dashboard, "/api/overview")).json.data;
    const changed = new Set([...part.tasks.map((task: { id: string }) => task.id), ...part.removed]);
    const merged = [...before.tasks.filter((task: { id: string }) => !changed.has(task.id)), ...part.tasks];
    const byId = (tasks: Array<{ id: string }>) => [...tasks].sort((a, b) => a.id.localeCompare(b.id));
    assert.deepEqual(byId(merged), byId(whole.tasks));
  });

  it("read-only: shows everything and refuses every change", async () => {
    const readOnly = await startDashboard(project.dir, { env: project.env, args: ["--read-only"] });
    try {
      const me = (await http(readOnly, "/api/me")).json.data;
      assert.equal(me.read_only, true);
      const refused = await post(readOnly, "arbeit_task_update", { task_id: taskId, title: "Changed" });
      assert.equal(refused.status, 403);
      assert.equal(refused.json.error.code, "READ_ONLY");
      const read = await post(readOnly, "arbeit_task_get", { task_id: taskId });
      assert.equal(read.json.success, true);
      assert.equal((await project.cli(["task", "get", taskId])).task.title, "Write the lexer");
    } finally {
      await readOnly.stop();
    }
  });
}

describe("arbeit ui on SQLite", () => dashboardSuite("sqlite"));
describe("arbeit ui on Postgres", { skip: await postgresSkip() }, () => dashboardSuite("postgres"));

describe("arbeit ui's command line", () => {
  it("says what is wrong with a flag (exit 2)", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const bad = await runCli(["ui", "--port", "http"], { cwd: dir });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--port must be a number/);
      const unknown = await runCli(["ui", "--opne"], { cwd: dir });
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /Did you mean --open\?/);
    } finally {
      cleanup();
    }
  });

  it("needs a project (NOT_INITIALIZED, exit 1)", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const result = await runCli(["ui", "--json"], { cwd: dir });
      assert.equal(result.code, 1);
      assert.equal(result.json.error.code, "NOT_INITIALIZED");
    } finally {
      cleanup();
    }
  });
});
