import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { postgresSkip } from "../helpers/postgres.js";
import {
  chromiumSkip,
  type Dashboard,
  type Engine,
  launchChromium,
  startDashboard,
  type UiProject,
  uiProject,
} from "./harness.js";

/**
 * Mission control in a real headless Chromium against the real `arbeit ui`: the home view that
 * says what needs a person, activity searched on the server, the task page's read-only intent,
 * and Esc that closes the keyboard help without leaving the page.
 */

const AGENT_SESSION = "ses-agent-42";

function missionSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let epic: string;
  let lexer: string;

  const call = (tool: string, args: unknown, session = "ses-planner", agent = "planner") =>
    project.cli(["call", tool, "-", "--session", session, "--agent", agent], JSON.stringify(args));

  before(async () => {
    project = await uiProject(engine);
    epic = (await call("arbeit_task_create", { title: "Billing epic", type: "epic" })).task.id;
    lexer = (
      await call("arbeit_task_create", {
        title: "Write the lexer",
        parent_id: epic,
        intent: "Turn source text into tokens",
      })
    ).task.id;
    dashboard = await startDashboard(project.dir, { env: project.env, args: ["--as", "alice"] });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(dashboard.url);
    await page.locator("[data-view]").first().waitFor();
  });
  after(async () => {
    await browser?.close();
    await dashboard?.stop();
    await project?.close();
  });

  it("Esc closes the keyboard help and stays on the task page", async () => {
    await page.goto(`${dashboard.origin}/board`);
    await page.locator(`[data-view="board"] [data-task-id="${lexer}"]`).first().click();
    await page.locator(`[data-view="task"][data-task-id="${lexer}"]`).waitFor();
    await page.locator("body").click();
    await page.keyboard.press("?");
    await page.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor();
    await page.keyboard.press("Escape");
    await page.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor({ state: "detached" });
    // Still here: a second Esc (help closed) is the one that goes back.
    assert.match(new URL(page.url()).pathname, new RegExp(`^/task/${lexer}$`));
    assert.equal(await page.locator(`[data-view="task"][data-task-id="${lexer}"]`).count(), 1);
    await page.keyboard.press("Escape");
    await page.locator('[data-view="board"]').waitFor();
  });

  it("shows an intent once set as read-only text, and saves other fields of that task", async () => {
    await page.goto(`${dashboard.origin}/task/${lexer}`);
    const form = page.getByRole("form", { name: "Edit task" });
    await form.waitFor();
    assert.equal(await form.getByRole("textbox", { name: "Intent" }).count(), 0, "no field to edit the intent");
    assert.equal((await form.getByLabel("Intent").textContent())?.trim(), "Turn source text into tokens");
    await form.getByLabel("Title").fill("Write the lexer by hand");
    await form.getByRole("button", { name: "Save" }).click();
    await form.getByRole("status").getByText("Saved.").waitFor();
    const seen = (await project.cli(["task", "get", lexer])).task;
    assert.equal(seen.title, "Write the lexer by hand");
    assert.equal(seen.intent, "Turn source text into tokens");
  });
}

describe("mission control in Chromium, on SQLite", { skip: chromiumSkip() }, () => missionSuite("sqlite"));
describe("mission control in Chromium, on Postgres", { skip: chromiumSkip() || (await postgresSkip()) }, () =>
  missionSuite("postgres"),
);
