import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { postgresSkip } from "../helpers/postgres.js";
import {
  chromiumSkip,
  type Dashboard,
  type Engine,
  signIn,
  signOut,
  startDashboard,
  type UiProject,
  uiProject,
} from "./harness.js";

/**
 * The task page in a real headless Chromium against the real `arbeit ui`: each field edited where
 * it is shown (Enter or leaving the field saves, Esc cancels and stays on the page), refusals shown
 * beside the field with nothing saved, changes made elsewhere taken in unless being edited, the
 * intent read-only once set, files and commits linked to the project's forge, and the file
 * reservations that concern the task beside its claim.
 */

const AGENT = "ses-agent-lexer";
const OTHER = "ses-agent-docs";
const REMOTE = "https://alice:S3CRET@github.com/acme/parser.git";
const WEB = "https://github.com/acme/parser";

function taskPageSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let lexer: string;
  let docs: string;
  let sha: string;

  const call = (tool: string, args: unknown, session = "ses-planner", agent = "planner") =>
    project.cli(["call", tool, "-", "--session", session, "--agent", agent], JSON.stringify(args));
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: project.dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const hook = async (fields: Record<string, unknown>) => {
    const result = await runHook(
      "post-tool-use",
      hookPayload(project.dir, AGENT, "PostToolUse", fields),
      project.dir,
      project.env,
    );
    assert.equal(result.code, 0, result.stderr);
  };
  const taskView = () => page.locator(`[data-view="task"][data-task-id="${lexer}"]`);
  const fieldOf = (name: string) => taskView().locator(`[data-field="${name}"]`);
  /** A field's value as shown: a button that opens its editor where the person may edit. */
  const shownValue = (name: string) => fieldOf(name).locator(".field-value");
  const stored = async (id = lexer) => (await project.cli(["task", "get", id])).task;
  const openLexer = async () => {
    await page.goto(`${dashboard.origin}/task/${lexer}`);
    await fieldOf("title").waitFor();
  };

  before(async () => {
    project = await uiProject(engine);
    git("init", "-q", "-b", "main");
    git("config", "user.email", "agent@example.com");
    git("config", "user.name", "Agent");
    git("remote", "add", "origin", REMOTE);
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main");
    lexer = (
      await call("arbeit_task_create", {
        title: "Write the lexer",
        intent: "Turn source text into tokens",
        description: "Numbers, names, strings",
        plan: "Write src/lexer/tokens.ts, then explain it in docs/lexer.md",
        metadata: { jira: "PARSE-7" },
      })
    ).task.id;
    docs = (await call("arbeit_task_create", { title: "Write the docs" })).task.id;
    // An agent works on the lexer: claims it, reserves its folder, writes a file and commits it.
    await call("arbeit_task_start_work", { task_id: lexer }, AGENT, "claude-code");
    await call("arbeit_task_claim", { task_id: lexer, paths: ["src/lexer/**"] }, AGENT, "claude-code");
    mkdirSync(join(project.dir, "src", "lexer"), { recursive: true });
    writeFileSync(join(project.dir, "src", "lexer", "tokens.ts"), "export const tokens = [];\n");
    await hook({
      tool_name: "Write",
      tool_input: { file_path: join(project.dir, "src", "lexer", "tokens.ts"), content: "export const tokens = [];\n" },
      tool_response: { filePath: join(project.dir, "src", "lexer", "tokens.ts"), success: true },
    });
    git("add", "src");
    const printed = git("commit", "-m", "Tokens for numbers and names");
    sha = git("rev-parse", "HEAD").trim();
    await hook({
      tool_name: "Bash",
      tool_input: { command: 'git add src && git commit -m "Tokens for numbers and names"' },
      tool_response: { stdout: printed, stderr: "", interrupted: false, isImage: false },
    });
    // Another agent, on another task, holds a file the lexer's plan names, shared.
    await call("arbeit_task_start_work", { task_id: docs }, OTHER, "opencode");
    await call("arbeit_task_claim", { task_id: docs, paths: ["docs/lexer.md"], shared: true }, OTHER, "opencode");

    ({ dashboard, browser, page } = await signIn(project, { width: 1280, height: 900 }));
  });
  after(() => signOut({ dashboard, browser, page }, project));

  it("shows each field once, in place, with no separate edit form", async () => {
    await openLexer();
    assert.equal(await page.getByRole("form", { name: "Edit task" }).count(), 0);
    assert.equal(await page.getByRole("button", { name: "Save", exact: true }).count(), 0);
    assert.equal(await taskView().getByRole("heading", { level: 1 }).textContent(), "Write the lexer");
    for (const name of ["title", "status", "priority", "owner", "description", "plan", "intent", "metadata.jira"])
      assert.equal(await fieldOf(name).count(), 1, name);
  });

  it("edits the title in place: Enter saves it, as human:<name>, and the heading shows it", async () => {
    await openLexer();
    await shownValue("title").click();
    const input = fieldOf("title").getByRole("textbox", { name: "Title" });
    assert.equal(await input.inputValue(), "Write the lexer");
    await input.fill("Write the lexer by hand");
    await input.press("Enter");
    // The title is what the agent holding the task took on: renaming it breaks the claim, on purpose.
    const alert = fieldOf("title").getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? "", /ALREADY_CLAIMED/);
    assert.equal((await stored()).title, "Write the lexer");
    await alert.getByRole("button", { name: "Break the claim and save" }).click();
    await taskView().getByRole("heading", { name: "Write the lexer by hand" }).waitFor();
    await fieldOf("title").getByRole("status").getByText("Saved.").waitFor();
    const seen = await project.cli(["task", "get", lexer, "--include", "recent_events"]);
    assert.equal(seen.task.title, "Write the lexer by hand");
    assert.equal(seen.recent_events.at(-1).agent, "human:alice");
    // Focus is back on the value: the keyboard carries on from there.
    assert.equal(
      await page.evaluate(() => (globalThis as any).document.activeElement?.closest("[data-field]")?.dataset.field),
      "title",
    );
    // The agent takes its task back, as the later tests expect it held.
    await call("arbeit_task_claim", { task_id: lexer }, AGENT, "claude-code");
  });

  it("saves a field on leaving it, and a choice from a list on Enter", async () => {
    await openLexer();
    await shownValue("risk").click();
    const risk = fieldOf("risk").getByRole("combobox", { name: "Risk" });
    await risk.selectOption("high");
    await taskView().getByRole("heading", { name: "Fields" }).click();
    await shownValue("risk").getByText("high").waitFor();
    await shownValue("priority").click();
    const priority = fieldOf("priority").getByRole("combobox", { name: "Priority" });
    await priority.selectOption("0");
    await priority.press("Enter");
    await fieldOf("priority").getByRole("button", { name: "P0" }).waitFor();
    // A choice made with the pointer saves at once; one made with the arrow keys waits for Enter.
    await shownValue("type").click();
    const type = fieldOf("type").getByRole("combobox", { name: "Type" });
    await type.dispatchEvent("pointerdown");
    await type.selectOption("bug");
    await shownValue("type").getByText("bug").waitFor();
    const seen = await stored();
    assert.equal(seen.type, "bug");
    assert.equal(seen.risk, "high");
    assert.equal(seen.priority, 0);
  });

  it("Esc cancels an edit, keeps the stored value, and does not leave the page", async () => {
    await page.goto(`${dashboard.origin}/board`);
    await page.locator(`[data-view="board"] [data-task-id="${lexer}"] a.title`).click();
    await shownValue("description").click();
    const editor = fieldOf("description").getByRole("textbox", { name: "Description" });
    await editor.fill("Half a thought");
    await editor.press("Escape");
    await fieldOf("description").getByRole("button", { name: "Numbers, names, strings" }).waitFor();
    assert.equal(await fieldOf("description").getByRole("textbox").count(), 0);
    assert.match(new URL(page.url()).pathname, new RegExp(`^/task/${lexer}$`));
    assert.equal(await taskView().count(), 1);
    assert.equal((await stored()).description, "Numbers, names, strings");
    // Out of the editor, Esc is the page's again: back to the board.
    await page.keyboard.press("Escape");
    await page.locator('[data-view="board"]').waitFor();
  });

  it("keeps Enter on a focused value opening its editor, for the keyboard", async () => {
    await openLexer();
    await shownValue("plan").focus();
    await page.keyboard.press("Enter");
    const editor = fieldOf("plan").getByRole("textbox", { name: "Plan" });
    await editor.waitFor();
    assert.equal(await editor.evaluate((node) => node === (globalThis as any).document.activeElement), true);
    await editor.press("Escape");
    await shownValue("plan").getByText("Write src/lexer/tokens.ts").waitFor();
  });

  it("shows the intent once set as read-only text, never as an editor", async () => {
    await openLexer();
    const intent = fieldOf("intent");
    assert.match((await intent.textContent()) ?? "", /Turn source text into tokens/);
    assert.match((await intent.textContent()) ?? "", /Fixed once set/);
    assert.equal(await intent.getByRole("button").count(), 0);
    assert.equal(await intent.getByRole("textbox").count(), 0);
    await intent.click();
    assert.equal(await intent.getByRole("textbox").count(), 0);
  });

  it("shows a refusal beside the field and saves nothing: a status change of a task another session claims", async () => {
    await openLexer();
    await shownValue("status").click();
    const status = fieldOf("status").getByRole("combobox", { name: "Status" });
    await status.selectOption("open");
    await status.press("Enter");
    const alert = fieldOf("status").getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? "", /ALREADY_CLAIMED/);
    assert.equal((await stored()).status, "in_progress");
    // The editor stays, with the person's choice, until they cancel; Esc does not go back.
    assert.equal(await status.inputValue(), "open");
    await status.press("Escape");
    await shownValue("status").getByText("in progress").waitFor();
    assert.equal(await fieldOf("status").getByRole("alert").count(), 0);
    assert.match(new URL(page.url()).pathname, new RegExp(`^/task/${lexer}$`));
    assert.equal((await stored()).status, "in_progress");
  });

  it("takes a change made elsewhere into a field not being edited, and marks it", async () => {
    await openLexer();
    await project.cli(["task", "update", lexer, "--plan", "Write the tokens first, then docs/lexer.md"]);
    await fieldOf("plan")
      .getByRole("button", { name: "Write the tokens first, then docs/lexer.md" })
      .waitFor({ timeout: 10_000 });
    await fieldOf("plan")
      .getByRole("status")
      .getByText(/changed elsewhere/)
      .waitFor();
  });

  it("keeps what the person types when the field changes underneath, says so, and asks before replacing it", async () => {
    await openLexer();
    await shownValue("description").click();
    const editor = fieldOf("description").getByRole("textbox", { name: "Description" });
    await editor.fill("Numbers, names, strings and comments");
    await project.cli(["task", "update", lexer, "--description", "Numbers only"]);
    await fieldOf("description")
      .getByRole("status")
      .getByText(/Changed elsewhere since you began/)
      .waitFor({
        timeout: 10_000,
      });
    assert.equal(await editor.inputValue(), "Numbers, names, strings and comments");
    await editor.press("Control+Enter");
    const alert = fieldOf("description").getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? "", /VERSION_CONFLICT/);
    assert.equal((await stored()).description, "Numbers only", "nothing saved over the other change");
    await alert.getByRole("button", { name: "Save mine over it" }).click();
    await fieldOf("description").getByRole("button", { name: "Numbers, names, strings and comments" }).waitFor();
    assert.equal((await stored()).description, "Numbers, names, strings and comments");
  });

  it("saves one field though another changed meanwhile: only a change of the same field conflicts", async () => {
    await openLexer();
    await shownValue("metadata.jira").click();
    const editor = fieldOf("metadata.jira").getByRole("textbox", { name: "Metadata jira" });
    await editor.fill('"PARSE-8"');
    await project.cli(["task", "update", lexer, "--plan", "Tokens, then docs/lexer.md"]);
    await editor.press("Enter");
    await fieldOf("metadata.jira").getByRole("button", { name: '"PARSE-8"' }).waitFor();
    const seen = await stored();
    assert.deepEqual(seen.metadata, { jira: "PARSE-8" });
    assert.equal(seen.plan, "Tokens, then docs/lexer.md");
  });

  it("adds a metadata key, refuses a value that is not JSON without saving it, and drops a key emptied", async () => {
    await openLexer();
    await taskView().getByText("Add metadata").click();
    const add = taskView().getByRole("form", { name: "Add metadata" });
    await add.getByLabel("Key").fill("estimate_hours");
    await add.getByLabel("Value").fill("6");
    await add.getByRole("button", { name: "Add" }).click();
    await shownValue("metadata.estimate_hours").getByText("6").waitFor();
    await shownValue("metadata.estimate_hours").click();
    const editor = fieldOf("metadata.estimate_hours").getByRole("textbox", { name: "Metadata estimate_hours" });
    await editor.fill("six hours");
    await editor.press("Enter");
    await fieldOf("metadata.estimate_hours")
      .getByRole("alert")
      .getByText(/must be JSON/)
      .waitFor();
    assert.equal((await stored()).metadata.estimate_hours, 6);
    await editor.fill("");
    await editor.press("Enter");
    await fieldOf("metadata.estimate_hours").waitFor({ state: "detached" });
    assert.deepEqual((await stored()).metadata, { jira: "PARSE-8" });
  });

  it("links the task's files and commits to the project's forge, never with the remote's credentials", async () => {
    await openLexer();
    const file = taskView().locator('[data-file="src/lexer/tokens.ts"] a');
    await file.waitFor();
    assert.equal(await file.getAttribute("href"), `${WEB}/blob/${sha}/src/lexer/tokens.ts`);
    const commit = taskView().locator(`[data-sha="${sha}"] a`);
    assert.equal(await commit.getAttribute("href"), `${WEB}/commit/${sha}`);
    assert.equal(await commit.getAttribute("rel"), "noopener noreferrer");
    assert.ok(!(await page.content()).includes("S3CRET"));
    const answer = await page.evaluate(async (id) => {
      const token = (globalThis as any).localStorage.getItem("arbeit-token") ?? "";
      const response = await fetch(`/api/task?id=${id}`, { headers: { Authorization: `Bearer ${token}` } });
      return response.text();
    }, lexer);
    assert.ok(!answer.includes("S3CRET"), "the answer carries no credential");
  });

  it("lists the reservations that concern the task beside its claim, and a person breaks one", async () => {
    await openLexer();
    const own = taskView().locator('[data-pattern="src/lexer/**"]');
    await own.waitFor();
    const ownText = (await own.textContent()) ?? "";
    for (const expected of ["exclusive", "claude-code", AGENT, "for this task", "left"])
      assert.ok(ownText.includes(expected), `${expected} in ${ownText}`);
    const other = taskView().locator('[data-pattern="docs/lexer.md"]');
    const otherText = (await other.textContent()) ?? "";
    for (const expected of ["shared", "opencode", docs]) assert.ok(otherText.includes(expected), otherText);
    await taskView()
      .getByText(/^by claude-code/)
      .waitFor();
    await other.getByRole("button", { name: "Break reservation of docs/lexer.md" }).click();
    await other.waitFor({ state: "detached", timeout: 10_000 });
    const left = (await call("arbeit_query", { query: "reservations" })).reservations.map(
      (r: { pattern: string }) => r.pattern,
    );
    assert.deepEqual(left, ["src/lexer/**"]);
  });

  it("answers GET /api/task with a structured refusal for a missing or unknown id, and only with the token", async () => {
    const requests: Array<[string, boolean]> = [
      ["/api/task", true],
      ["/api/task?id=tkt-zzzzzzzz", true],
      ["/api/task?id=x", false],
    ];
    const answers = await page.evaluate(
      async (asked) =>
        Promise.all(
          asked.map(async ([path, auth]) => {
            const token = (globalThis as any).localStorage.getItem("arbeit-token") ?? "";
            const response = await fetch(path, auth ? { headers: { Authorization: `Bearer ${token}` } } : {});
            return { status: response.status, body: (await response.json()) as any };
          }),
        ),
      requests,
    );
    const [missing, unknown, anonymous] = answers;
    assert.equal(missing?.status, 400);
    assert.equal(missing?.body.error.code, "INVALID_ARGUMENT");
    assert.equal(unknown?.body.success, false);
    assert.equal(unknown?.body.error.code, "TASK_NOT_FOUND");
    assert.equal(anonymous?.status, 401);
  });

  it("read-only: the same page, every field as text", async () => {
    const readOnly = await startDashboard(project.dir, { env: project.env, args: ["--read-only"] });
    const tab = await page.context().newPage();
    try {
      await tab.goto(readOnly.url);
      await tab.locator("[data-view]").first().waitFor();
      await tab.goto(`${readOnly.origin}/task/${lexer}`);
      await tab.locator('[data-field="title"]').waitFor();
      assert.equal(await tab.locator("[data-view=task] [data-field] button").count(), 0);
      assert.equal(await tab.getByRole("button", { name: /^Break/ }).count(), 0);
    } finally {
      await tab.close();
      await readOnly.stop();
    }
  });
}

describe("task page (SQLite)", { skip: chromiumSkip() }, () => taskPageSuite("sqlite"));
describe("task page (Postgres)", { skip: chromiumSkip() || (await postgresSkip()) }, () => taskPageSuite("postgres"));
