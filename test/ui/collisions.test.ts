import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { postgresSkip } from "../helpers/postgres.js";
import { chromiumSkip, type Dashboard, type Engine, signIn, signOut, type UiProject, uiProject } from "./harness.js";

/**
 * Collisions on the home view, in a real headless Chromium against the real `arbeit ui`: an edit
 * Claude Code's PreToolUse hook refused (the real CLI hook, on SQLite and Postgres) is shown to
 * the person once however often it was retried, with who was refused, which file and whose
 * reservation; once the holder lets go, it shows the file free, and the refused session's next
 * step is told so, once.
 */

const ALICE = "ses-alice-desk";
const BOB = "ses-bob-laptop";

function collisionSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let task: string;

  const call = (tool: string, args: unknown, session = ALICE, agent = "alice") =>
    project.cli(["call", tool, "-", "--session", session, "--agent", agent], JSON.stringify(args));
  const hook = async (name: string, event: string, fields: Record<string, unknown>) => {
    const result = await runHook(name, hookPayload(project.dir, BOB, event, fields), project.dir, project.env);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  };
  const editLogin = () =>
    hook("pre-tool-use", "PreToolUse", { tool_name: "Edit", tool_input: { file_path: `${project.dir}/src/login.ts` } });

  before(async () => {
    project = await uiProject(engine);
    task = (await call("arbeit_task_create", { title: "Redesign the login" })).task.id;
    await call("arbeit_task_start_work", { task_id: task });
    await call("arbeit_task_claim", { task_id: task, paths: ["src/**"] });
    ({ dashboard, browser, page } = await signIn(project));
  });
  after(() => signOut({ dashboard, browser, page }, project));

  it("shows an edit refused three times as one collision: who, which file, whose reservation, still held", async () => {
    for (let i = 0; i < 3; i++) assert.match(await editLogin(), /"permissionDecision":"deny"/);
    await page.goto(`${dashboard.origin}/`);
    const panel = page.locator('section[aria-labelledby="home-collisions"]');
    const row = panel.locator('li[data-path="src/login.ts"]');
    await row.waitFor();
    assert.equal(await row.count(), 1);
    const text = (await row.textContent()) ?? "";
    assert.match(text, /still held/);
    assert.match(text, /claude-code \(session ses-bob-laptop\) was refused src\/login\.ts/);
    assert.match(text, /held by alice \(session ses-alice-desk\) for tkt-[a-z0-9]{8} \(src\/\*\*\)/);
    assert.equal(await row.getAttribute("data-freed"), "false");
    assert.equal(await row.locator(`a[href="/task/${task}"]`).count(), 1);
  });

  it("once alice lets go, shows the file free, and bob's next step is told so once", async () => {
    await call("arbeit_task_stop_work", { task_id: task });
    await page.goto(`${dashboard.origin}/`);
    await page.locator('li[data-path="src/login.ts"][data-freed="true"]').waitFor();
    const prompt = (text: string) => hook("user-prompt-submit", "UserPromptSubmit", { prompt: text });
    assert.match(
      await prompt("next"),
      /src\/login\.ts is free now \(was held by alice \(session ses-alice-desk, task tkt-[a-z0-9]{8}\)\)/,
    );
    assert.doesNotMatch(await prompt("and then"), /is free now/);
    assert.equal(await editLogin(), "", "the edit goes ahead");
  });
}

const noChromium = chromiumSkip();
describe("collisions on the home view (SQLite)", { skip: noChromium }, () => collisionSuite("sqlite"));
describe("collisions on the home view (Postgres)", { skip: noChromium || (await postgresSkip()) }, () =>
  collisionSuite("postgres"),
);
