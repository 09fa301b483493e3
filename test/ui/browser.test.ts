import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { postgresSkip } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import {
  chromiumSkip,
  type Dashboard,
  type Engine,
  launchChromium,
  startDashboard,
  type UiProject,
  uiProject,
  visitAnotherServer,
} from "./harness.js";

/**
 * The dashboard in a real headless Chromium against the real `arbeit ui`, over a project that
 * other processes (the CLI, as agents would) keep changing. ARBEIT_DOCS_SCREENSHOTS=1 also
 * writes the screenshots docs/dashboard.md and the README show.
 */

const HOSTILE = "<img src=x onerror=alert(1)>";
const SCREENSHOTS = process.env.ARBEIT_DOCS_SCREENSHOTS === "1";
const IMAGES = fileURLToPath(new URL("../../docs/images/", import.meta.url));
const AGENT_SESSION = "ses-claude-7f3a";

interface Seeded {
  epic: string;
  lexer: string;
  grammar: string;
  hostile: string;
  question: string;
}

/** A small project as agents leave it: a plan, work in progress, a dependency, a question. */
async function seed(project: UiProject): Promise<Seeded> {
  const call = (tool: string, args: unknown, session = "ses-planner", agent = "planner") =>
    project.cli(["call", tool, "-", "--session", session, "--agent", agent], JSON.stringify(args));
  const epic = (await call("arbeit_task_create", { title: "Ship the parser", type: "epic", priority: 1 })).task.id;
  const lexer = (
    await call("arbeit_task_create", {
      title: "Write the lexer",
      type: "feature",
      parent_id: epic,
      intent: "Turn source text into tokens",
      description: "Numbers, names, strings, comments",
      plan: "One function per token kind",
      metadata: { jira: "PARSE-7", estimate_hours: 6 },
    })
  ).task.id;
  const grammar = (
    await call("arbeit_task_create", {
      title: "Write the grammar",
      type: "feature",
      parent_id: epic,
      blocked_by: [lexer],
    })
  ).task.id;
  await call("arbeit_task_create", {
    title: "Document the syntax",
    type: "chore",
    parent_id: epic,
    blocked_by: [grammar],
  });
  const hostile = (await call("arbeit_task_create", { title: HOSTILE, type: "bug" })).task.id;
  const first = (await call("arbeit_context_add", { task_id: lexer, type: "decision", content: "Hand-written lexer" }))
    .entry.id;
  await call("arbeit_context_add", {
    task_id: lexer,
    type: "decision",
    content: "Generated lexer after all",
    supersede_entry_id: first,
  });
  await call("arbeit_progress_add", { task_id: lexer, items: ["Tokens", "Comments"] });
  await call("arbeit_task_start_work", { task_id: lexer }, AGENT_SESSION, "claude-code");
  const question = (
    await call(
      "arbeit_context_add",
      { task_id: lexer, type: "blocker", content: "Should numbers allow underscores?" },
      AGENT_SESSION,
      "claude-code",
    )
  ).entry.id;
  return { epic, lexer, grammar, hostile, question };
}

function browserSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let ids: Seeded;
  const dialogs: string[] = [];
  const foreign: string[] = [];
  let navigations = 0;

  before(async () => {
    project = await uiProject(engine);
    ids = await seed(project);
    dashboard = await startDashboard(project.dir, { env: project.env, args: ["--as", "alice"] });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on("request", (request) => {
      const url = request.url();
      if (!url.startsWith(`${dashboard.origin}/`) && !url.startsWith("data:")) foreign.push(url);
    });
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await page.goto(dashboard.url);
    await page.locator('[data-view="home"]').waitFor();
  });
  after(async () => {
    await browser?.close();
    await dashboard?.stop();
    await project?.close();
  });

  const shoot = async (name: string) => {
    if (!SCREENSHOTS || engine !== "sqlite") return;
    mkdirSync(IMAGES, { recursive: true });
    await page.screenshot({ path: join(IMAGES, `dashboard-${name}.png`) });
  };

  /** Goes to a view by its nav link, as a person would (no page load). */
  const open = async (name: string, view: string) => {
    await page
      .getByRole("navigation", { name: "Views" })
      .getByRole("link", { name: new RegExp(`^${name}`) })
      .click();
    await page.locator(`[data-view="${view}"]`).waitFor();
  };

  it("keeps the token out of the address bar, and out of every cookie", async () => {
    const shown = new URL(page.url());
    assert.equal(shown.hash, "");
    assert.equal(shown.searchParams.get("token"), null);
    assert.ok(!page.url().includes(dashboard.token));
    assert.deepEqual(await context.cookies(), []);
  });

  it("sends the token to no other server on this host: a page served from another port receives none", async () => {
    const { headers, stored } = await visitAnotherServer(context, "arbeit-token");
    assert.ok(headers.length >= 2, "the other server was visited");
    for (const seen of headers) {
      assert.equal(seen.cookie, undefined);
      assert.ok(!JSON.stringify(seen).includes(dashboard.token), "no header carries the token");
    }
    assert.equal(stored, null, "another origin reads none");
    assert.deepEqual(await context.cookies(), []);
  });

  it("answers an API request from the page without the Authorization header with 401", async () => {
    const status = await page.evaluate(async () => (await fetch("/api/me", { credentials: "include" })).status);
    assert.equal(status, 401);
    const live = await page.evaluate(async () => (await fetch("/api/live", { credentials: "include" })).status);
    assert.equal(live, 401);
  });

  it("home: the open question first, then who works on what", async () => {
    const home = page.locator('[data-view="home"]');
    await home.locator(`[data-entry-id="${ids.question}"]`).waitFor();
    await home
      .getByRole("region", { name: /^Working now/ })
      .getByText(AGENT_SESSION)
      .waitFor();
    await shoot("home");
  });

  it("board: a column per status, with derived ready and blocked", async () => {
    await open("Board", "board");
    const board = page.locator('[data-view="board"]');
    await board.locator(`[data-task-id="${ids.grammar}"]`).waitFor();
    const grammar = board.locator(`[data-task-id="${ids.grammar}"]`);
    assert.match((await grammar.textContent()) ?? "", /blocked/i);
    const inProgress = board.getByRole("region", { name: "in progress" });
    assert.ok((await inProgress.locator(`[data-task-id="${ids.lexer}"]`).count()) === 1);
    assert.match((await board.locator(`[data-task-id="${ids.hostile}"]`).textContent()) ?? "", /ready/i);
    await shoot("board");
  });

  it("shows a hostile title as text: no element, no script", async () => {
    const card = page.locator(`[data-task-id="${ids.hostile}"]`).first();
    assert.ok(((await card.textContent()) ?? "").includes(HOSTILE));
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assert.deepEqual(dialogs, []);
  });

  it("tree: the hierarchy with progress rolled up", async () => {
    await open("Tree", "tree");
    const tree = page.locator('[data-view="tree"]');
    await tree.locator(`[data-task-id="${ids.lexer}"]`).waitFor();
    assert.equal(await tree.locator(`[data-task-id="${ids.epic}"]`).count(), 1);
    assert.ok((await tree.locator("progress").count()) > 0);
    await shoot("tree");
  });

  it("graph: the dependency DAG, the critical path marked", async () => {
    await open("Graph", "graph");
    const graph = page.locator('[data-view="graph"]');
    await graph.locator(`[data-task-id="${ids.grammar}"]`).waitFor();
    assert.ok((await graph.locator(".critical").count()) > 0, "critical path marked");
    await shoot("graph");
    await graph.locator(`[data-task-id="${ids.grammar}"]`).first().click();
    await page.locator(`[data-view="task"][data-task-id="${ids.grammar}"]`).waitFor();
    assert.match(page.url(), new RegExp(`/task/${ids.grammar}$`));
  });

  it("task detail: fields and metadata, the context timeline with its supersede chain, progress, sessions, events", async () => {
    await page.goto(`${dashboard.origin}/task/${ids.lexer}`);
    const detail = page.locator(`[data-view="task"][data-task-id="${ids.lexer}"]`);
    await detail.getByRole("heading", { name: "Write the lexer" }).waitFor();
    const text = (await detail.textContent()) ?? "";
    for (const expected of [
      "Write the lexer",
      "Hand-written lexer",
      "Generated lexer after all",
      "Tokens",
      AGENT_SESSION,
    ])
      assert.ok(text.includes(expected), `task detail shows ${expected}`);
    const metadata = detail.locator("dl.metadata");
    assert.deepEqual(await metadata.locator("dt").allTextContents(), ["jira", "estimate_hours"]);
    assert.deepEqual(await metadata.locator("dd").allTextContents(), ['"PARSE-7"', "6"]);
    await shoot("task");
  });

  it("agents: who works on what, with the claim's lease", async () => {
    await open("Agents", "agents");
    const agents = page.locator('[data-view="agents"]');
    await agents.getByText(AGENT_SESSION).first().waitFor();
    const text = (await agents.textContent()) ?? "";
    assert.ok(text.includes("Write the lexer"));
    assert.ok(text.includes("claude-code"));
    await shoot("agents");
  });

  it("activity: the event stream", async () => {
    await open("Activity", "activity");
    const activity = page.locator('[data-view="activity"]');
    await activity.locator("li[data-seq]").getByText("context_added").first().waitFor();
    await shoot("activity");
  });

  it("shows a task another process creates, without a reload", async () => {
    await open("Board", "board");
    const before = navigations;
    await project.cli(["task", "create", "--title", "Made by another agent"]);
    await page.locator('[data-view="board"]').getByText("Made by another agent").waitFor({ timeout: 10_000 });
    assert.equal(navigations, before, "the page did not reload");
  });

  it("frees the task a blocker held up when the blocker is finished elsewhere, without a reload", async () => {
    const blocker = (await project.cli(["task", "create", "--title", "Choose the license"])).task.id;
    const held = (await project.cli(["task", "create", "--title", "Publish the package", "--blocked-by", blocker])).task
      .id;
    const card = page.locator(`[data-view="board"] [data-task-id="${held}"]`);
    await card.getByText("blocked").waitFor({ timeout: 10_000 });
    const before = navigations;
    await project.cli(["task", "update", blocker, "--status", "cancelled"]);
    await card.getByText("ready").waitFor({ timeout: 10_000 });
    assert.equal(await card.getByText("blocked").count(), 0);
    assert.equal(navigations, before, "the page did not reload");
  });

  it("keeps eight tabs loading and live: a browser gives a server six connections, and the tabs share one stream", async () => {
    const tabs: Page[] = [];
    try {
      for (let i = 0; i < 8; i++) {
        const tab = await context.newPage();
        await tab.goto(`${dashboard.origin}/board`);
        await tab
          .locator(`[data-view="board"] [data-task-id="${ids.grammar}"]`)
          .waitFor({ state: "attached", timeout: 15_000 });
        tabs.push(tab);
      }
      await project.cli(["task", "create", "--title", "Seen in every tab"]);
      for (const tab of [page, ...tabs])
        await tab
          .locator('[data-view="board"]')
          .getByText("Seen in every tab")
          .waitFor({ state: "attached", timeout: 10_000 });
    } finally {
      for (const tab of tabs) await tab.close();
    }
  });

  it("makes an edit in the page that `arbeit task get` then shows, as human:<name>", async () => {
    await page.goto(`${dashboard.origin}/task/${ids.grammar}`);
    const title = page.locator('[data-view="task"] [data-field="title"]');
    await title.locator(".field-value").click();
    await title.getByRole("textbox", { name: "Title" }).fill("Write the grammar (LL(1))");
    await title.getByRole("textbox", { name: "Title" }).press("Enter");
    await page.locator(`[data-view="task"]`).getByRole("heading", { name: "Write the grammar (LL(1))" }).waitFor();
    const seen = await project.cli(["task", "get", ids.grammar, "--include", "recent_events"]);
    assert.equal(seen.task.title, "Write the grammar (LL(1))");
    assert.equal(seen.recent_events.at(-1).agent, "human:alice");
  });

  it("reports a conflicting edit and keeps both the other change and what the person typed", async () => {
    await page.goto(`${dashboard.origin}/task/${ids.grammar}`);
    const title = page.locator('[data-view="task"] [data-field="title"]');
    await title.locator(".field-value").click();
    const input = title.getByRole("textbox", { name: "Title" });
    await input.fill("Grammar, my way");
    // Meanwhile an agent changes the same field; the page hears of it but must not take it as seen.
    await project.cli(["task", "update", ids.grammar, "--title", "Grammar, the agent's way"]);
    await title
      .getByRole("status")
      .getByText(/Changed elsewhere/)
      .waitFor({ timeout: 10_000 });
    await input.press("Enter");
    const alert = title.getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? "", /VERSION_CONFLICT|changed/i);
    assert.equal(await input.inputValue(), "Grammar, my way");
    const seen = (await project.cli(["task", "get", ids.grammar])).task;
    assert.equal(seen.title, "Grammar, the agent's way");
    await input.press("Escape");
  });

  it("inbox: an answer reaches the working session's next hook, exactly once", async () => {
    await open("Inbox", "inbox");
    const question = page.getByRole("article", { name: `Question on ${ids.lexer}` });
    await question.waitFor();
    await shoot("inbox");
    await question.getByRole("textbox", { name: "Answer" }).fill("Yes: 1_000_000 is fine.");
    await question.getByRole("button", { name: "Send answer" }).click();
    await question.waitFor({ state: "detached", timeout: 10_000 });

    const entries = (await project.cli(["task", "get", ids.lexer, "--include", "context_all"])).context_all;
    const answer = entries.find((entry: { type: string }) => entry.type === "user_input");
    assert.equal(answer.content, "Yes: 1_000_000 is fine.");
    assert.equal(entries.find((entry: { id: string }) => entry.id === ids.question).superseded_by, answer.id);

    const next = (event: string, name: string) =>
      runHook(
        name,
        hookPayload(project.dir, AGENT_SESSION, event, {
          tool_name: "Read",
          tool_input: { file_path: join(project.dir, "README.md") },
          tool_response: {},
          prompt: "go on",
        }),
        project.dir,
        project.env,
      );
    const first = await next("PostToolUse", "post-tool-use");
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /1_000_000 is fine/);
    const again = await next("PostToolUse", "post-tool-use");
    const prompt = await next("UserPromptSubmit", "user-prompt-submit");
    assert.doesNotMatch(again.stdout + prompt.stdout, /1_000_000 is fine/);
  });

  it("creates a task from the board, which the CLI then lists", async () => {
    await open("Board", "board");
    await page.getByText("New task").click();
    const form = page.getByRole("form", { name: "New task" }).or(page.locator("details[open]"));
    await form.getByLabel("Title").fill("Planned by a person");
    await form.getByRole("button", { name: "Create task" }).click();
    await page.locator('[data-view="board"]').getByText("Planned by a person").first().waitFor();
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.ok(titles.includes("Planned by a person"));
  });

  it("adds context and a dependency from the task page, through the tools", async () => {
    await page.goto(`${dashboard.origin}/task/${ids.hostile}`);
    await page.locator(`[data-view="task"]`).getByRole("heading", { name: HOSTILE }).waitFor();
    const context = page.getByRole("form", { name: "Add context" });
    await context.getByLabel("Context type").selectOption("decision");
    await context.getByLabel("Content").fill("Escape every title");
    await context.getByRole("button", { name: "Add context" }).click();
    await page.locator('[data-view="task"]').getByText("Escape every title").first().waitFor();
    const blockedBy = page.locator('[data-view="task"] [data-field="blocked_by"]');
    await blockedBy.getByRole("button", { name: "Edit Blocked by" }).click();
    await blockedBy.getByRole("textbox", { name: "Blocked by" }).fill(ids.lexer);
    await blockedBy.getByRole("textbox", { name: "Blocked by" }).press("Enter");
    await page.locator('[data-view="task"]').getByRole("link", { name: "Write the lexer" }).first().waitFor();
    const seen = await project.cli(["task", "get", ids.hostile, "--include", "context"]);
    assert.deepEqual(seen.task.blocked_by, [ids.lexer]);
    assert.equal(seen.context.at(-1).content, "Escape every title");
  });

  it("filters by text from the URL, and moves between views by keyboard", async () => {
    await page.goto(`${dashboard.origin}/board?q=grammar`);
    const board = page.locator('[data-view="board"]');
    await board.locator(`[data-task-id="${ids.grammar}"]`).waitFor();
    assert.equal(await board.locator(`[data-task-id="${ids.lexer}"]`).count(), 0);
    assert.equal(await page.getByRole("searchbox", { name: "Search" }).inputValue(), "grammar");
    await page.locator("body").click();
    await page.keyboard.press("g");
    await page.keyboard.press("t");
    await page.locator('[data-view="tree"]').waitFor();
    await page.keyboard.press("/");
    assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), "filter-q");
  });

  it("breaks a claim on a person's word, and the event log records it", async () => {
    await page.goto(`${dashboard.origin}/task/${ids.lexer}`);
    await page.locator(`[data-view="task"]`).getByRole("heading", { name: "Write the lexer" }).waitFor();
    await page.getByRole("button", { name: `Break claim on ${ids.lexer}` }).click();
    const dialogOrDone = page.getByRole("button", { name: `Break claim on ${ids.lexer}` });
    await dialogOrDone.waitFor({ state: "detached", timeout: 10_000 });
    const seen = await project.cli(["task", "get", ids.lexer, "--include", "recent_events"]);
    assert.equal(seen.task.claim_session, null);
    const released = seen.recent_events.find((event: { event_type: string }) => event.event_type === "claim_released");
    assert.equal(released.agent, "human:alice");
  });

  it("sent no request anywhere but its own server", () => {
    assert.deepEqual(foreign, []);
  });

  it("read-only: shows the project and offers no edits", async () => {
    const readOnly = await startDashboard(project.dir, { env: project.env, args: ["--read-only"] });
    const other = await context.newPage();
    try {
      await other.goto(readOnly.url);
      await other.locator('[data-view="home"]').waitFor();
      await other
        .getByText(/read-only/i)
        .first()
        .waitFor();
      assert.equal(await other.getByRole("button", { name: "Create task" }).count(), 0);
      await other.goto(`${readOnly.origin}/task/${ids.grammar}`);
      await other.locator('[data-view="task"] [data-field="title"]').waitFor();
      assert.equal(await other.locator('[data-view="task"] [data-field] button').count(), 0);
    } finally {
      await other.close();
      await readOnly.stop();
    }
  });

  it("shows nothing to a browser that never opened the printed URL, and says what to open", async () => {
    const stranger = await browser.newContext();
    try {
      const visit = await stranger.newPage();
      const answers: number[] = [];
      visit.on("response", (response) => {
        if (new URL(response.url()).pathname.startsWith("/api/")) answers.push(response.status());
      });
      await visit.goto(`${dashboard.origin}/board`);
      await visit.locator('[data-view="locked"]').getByText("Open the URL that arbeit ui printed").waitFor();
      assert.equal(await visit.locator('[data-view="board"]').count(), 0);
      assert.ok(!((await visit.content()) ?? "").includes("Write the lexer"));
      assert.ok(
        answers.every((status) => status === 401),
        `API answers: ${answers}`,
      );
    } finally {
      await stranger.close();
    }
  });
}

describe("the dashboard in Chromium, on SQLite", { skip: chromiumSkip() }, () => browserSuite("sqlite"));
describe("the dashboard in Chromium, on Postgres", { skip: chromiumSkip() || (await postgresSkip()) }, () =>
  browserSuite("postgres"),
);

describe("arbeit ui --open", { skip: chromiumSkip() }, () => {
  it("hands the browser a file only this user can read, not the token on a command line every user can see", async () => {
    const project = await uiProject("sqlite");
    // Stands in for the desktop's opener: it records the command line it was given.
    const bin = tempDir("arbeit-opener-");
    const record = join(bin.dir, "opened.txt");
    for (const name of ["xdg-open", "open"]) {
      writeFileSync(join(bin.dir, name), `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\n`);
      chmodSync(join(bin.dir, name), 0o755);
    }
    const dashboard = await startDashboard(project.dir, {
      env: { ...project.env, PATH: `${bin.dir}:${process.env.PATH}` },
      args: ["--open"],
    });
    const browser = await launchChromium();
    try {
      while (!existsSync(record) || readFileSync(record, "utf8") === "")
        await new Promise((resolve) => setTimeout(resolve, 50));
      const args = readFileSync(record, "utf8").trim().split("\n");
      assert.ok(!args.join(" ").includes(dashboard.token), `the command line carries the token: ${args}`);
      assert.equal(args.length, 1, `${args}`);
      const file = args[0]!;
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(join(file, "..")).mode & 0o777, 0o700);

      const page = await browser.newPage();
      await page.goto(pathToFileURL(file).href);
      await page.locator('[data-view="home"]').waitFor();
      assert.equal(new URL(page.url()).origin, dashboard.origin);
      assert.ok(!page.url().includes(dashboard.token));

      await dashboard.stop();
      assert.equal(existsSync(file), false, "the file goes when the server stops");
    } finally {
      await browser.close();
      await dashboard.stop();
      await project.close();
      bin.cleanup();
    }
  });
});

describe("a token from an earlier start of arbeit ui", { skip: chromiumSkip() }, () => {
  it("opens nothing on the same address: the page asks for the new URL, and the new URL works", async () => {
    const project = await uiProject("sqlite");
    const browser = await launchChromium();
    let second: Dashboard | undefined;
    try {
      const first = await startDashboard(project.dir, { env: project.env });
      const page = await browser.newPage();
      await page.goto(first.url);
      await page.locator('[data-view="home"]').waitFor();
      await first.stop();
      // The same address (port) again, with a new token: the browser still holds the old one.
      second = await startDashboard(project.dir, {
        env: project.env,
        args: ["--port", new URL(first.origin).port],
      });
      assert.equal(second.origin, first.origin);
      await page.goto(`${second.origin}/board`);
      await page.locator('[data-view="locked"]').waitFor();
      assert.equal(await page.locator('[data-view="board"]').count(), 0);
      await page.goto(second.url);
      await page.locator('[data-view="home"]').waitFor();
    } finally {
      await browser.close();
      await second?.stop();
      await project.close();
    }
  });
});
