import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { letLeaseRunOut } from "../helpers/expiry.js";
import { postgresSkip } from "../helpers/postgres.js";
import { chromiumSkip, type Dashboard, type Engine, signIn, signOut, type UiProject, uiProject } from "./harness.js";

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
    ({ dashboard, browser, page } = await signIn(project));
  });
  after(() => signOut({ dashboard, browser, page }, project));

  it("Esc closes the keyboard help and stays on the task page", async () => {
    await page.goto(`${dashboard.origin}/board`);
    await page.locator(`[data-view="board"] [data-task-id="${lexer}"]`).first().click();
    const task = page.locator(`[data-view="task"][data-task-id="${lexer}"]`);
    // Focus on the page, in no field (a key typed into a field is text, not a shortcut).
    await task.locator(".toolbar code").click();
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
    const task = page.locator(`[data-view="task"][data-task-id="${lexer}"]`);
    const intent = task.locator('[data-field="intent"]');
    await intent.waitFor();
    assert.match((await intent.textContent()) ?? "", /Turn source text into tokens/);
    assert.equal(await intent.getByRole("textbox").count(), 0, "the intent is shown, not offered for editing");
    assert.equal(await intent.getByRole("button").count(), 0);
    const title = task.locator('[data-field="title"]');
    await title.locator(".field-value").click();
    await title.getByRole("textbox", { name: "Title" }).fill("Write the lexer by hand");
    await title.getByRole("textbox", { name: "Title" }).press("Enter");
    await title.getByRole("status").getByText("Saved.").waitFor();
    const seen = (await project.cli(["task", "get", lexer])).task;
    assert.equal(seen.title, "Write the lexer by hand");
    assert.equal(seen.intent, "Turn source text into tokens");
  });

  it("task page: the story first (a question and its answer in the timeline), each field shown once", async () => {
    const asked = (
      await call("arbeit_context_add", { task_id: lexer, type: "blocker", content: "Tabs or spaces?" }, AGENT_SESSION)
    ).entry.id;
    const answer = (
      await call(
        "arbeit_context_add",
        { task_id: lexer, type: "user_input", content: "Spaces.", supersede_entry_id: asked },
        "ses-person",
        "human:bob",
      )
    ).entry.id;
    await page.goto(`${dashboard.origin}/task/${lexer}`);
    const detail = page.locator(`[data-view="task"][data-task-id="${lexer}"]`);
    await detail.locator(`[data-entry-id="${answer}"]`).waitFor();
    const headings = await detail.locator("section.panel h2").allTextContents();
    assert.match(headings[0] ?? "", /^Context/, `sections: ${headings}`);
    const question = detail.locator(`[data-entry-id="${asked}"]`);
    assert.match((await question.textContent()) ?? "", new RegExp(`answered by ${answer}`));
    assert.equal(await question.locator("del").count(), 0, "an answered question is not struck out");
    assert.match((await detail.locator(`[data-entry-id="${answer}"]`).textContent()) ?? "", /answers.*Spaces\./s);
    // Each field once, edited where it is shown; what the store sets, once, as text.
    for (const field of ["title", "description", "intent", "owner", "version"])
      assert.equal(await detail.locator(`[data-field="${field}"]`).count(), 1, field);
    assert.equal(await detail.getByRole("form", { name: "Edit task" }).count(), 0);
    assert.equal(await detail.locator('[data-field="version"] button').count(), 0);
  });

  it("home: what needs a person, who works on what, and each epic's progress", async () => {
    const tries = (await call("arbeit_task_create", { title: "Flaky checkout test", parent_id: epic })).task.id;
    for (const content of ["Retried with a longer timeout", "Pinned the browser", "Ran it alone"])
      await call("arbeit_context_add", { task_id: tries, type: "attempt", content });
    const left = (await call("arbeit_task_create", { title: "Half-done migration" })).task.id;
    await call("arbeit_task_start_work", { task_id: left }, "ses-quitter", "quitter");
    await call("arbeit_task_stop_work", { task_id: left }, "ses-quitter", "quitter");
    await call("arbeit_task_start_work", { task_id: lexer }, AGENT_SESSION, "claude-code");
    await call("arbeit_task_claim", { action: "claim", task_id: lexer }, AGENT_SESSION, "claude-code");
    await call("arbeit_task_update", { task_id: tries, status: "completed" });

    // Last, so that no later write sweeps it: a claim whose lease runs out before the page loads.
    const sleepy = (await call("arbeit_task_create", { title: "Rename the config keys" })).task.id;
    const claimed = await call("arbeit_task_claim", { task_id: sleepy }, "ses-sleepy", "sleepy");
    assert.ok(claimed.task?.lease_expires_at ?? claimed.lease_expires_at, JSON.stringify(claimed));
    await letLeaseRunOut({ cwd: project.dir, env: project.env }, sleepy);

    await page.goto(`${dashboard.origin}/`);
    const home = page.locator('[data-view="home"]');
    const needs = home.getByRole("region", { name: /^Needs you/ });
    await needs.locator(`[data-task-id="${left}"]`).waitFor();
    assert.match((await needs.locator(`[data-task-id="${left}"]`).textContent()) ?? "", /stopped.*ses-quitter/s);
    assert.match((await needs.locator(`[data-task-id="${sleepy}"]`).textContent()) ?? "", /stale claim.*sleepy/s);
    assert.equal(await needs.locator(`[data-task-id="${tries}"]`).count(), 0, "a completed task needs no one");
    // Completed: its attempts no longer need anyone. Reopened, they do.
    await call("arbeit_task_update", { task_id: tries, status: "in_progress" });
    await needs.locator(`[data-task-id="${tries}"]`).getByText("3 attempts").waitFor({ timeout: 10_000 });

    const working = home.getByRole("region", { name: /^Working now/ });
    const row = working.locator(`[data-session-id="${AGENT_SESSION}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? "", /Write the lexer/);
    assert.match((await row.textContent()) ?? "", /left/, "the lease counts down");

    const progress = home.getByRole("region", { name: "Progress" });
    const billing = progress.locator(`[data-task-id="${epic}"]`);
    assert.match((await billing.textContent()) ?? "", /0\/2/);
    assert.equal(await progress.getByRole("img", { name: /Work per day/ }).count(), 1);
  });

  it("home: shows a question the moment an agent files it, and the browser notifies the person", async () => {
    const context = await browser.newContext();
    try {
      await context.grantPermissions(["notifications"], { origin: dashboard.origin });
      // Records each notification the page raises (the browser's own stays out of reach of a test).
      await context.addInitScript({
        content: `{
          const Native = window.Notification;
          window.shown = [];
          window.Notification = class extends Native {
            constructor(title, options) {
              super(title, options);
              window.shown.push({ title, body: options?.body ?? "" });
            }
          };
        }`,
      });
      const tab = await context.newPage();
      let navigations = 0;
      tab.on("framenavigated", (frame) => {
        if (frame === tab.mainFrame()) navigations++;
      });
      await tab.goto(dashboard.url);
      const needs = tab.locator('[data-view="home"]').getByRole("region", { name: /^Needs you/ });
      await needs.waitFor();
      await tab.getByText("Notifying you of new questions").waitFor();
      const before = navigations;
      const asked = (
        await call(
          "arbeit_context_add",
          { task_id: lexer, type: "blocker", content: "May the lexer drop tabs?" },
          AGENT_SESSION,
          "claude-code",
        )
      ).entry.id;
      await needs
        .locator(`[data-entry-id="${asked}"]`)
        .getByText("May the lexer drop tabs?")
        .waitFor({ timeout: 10_000 });
      assert.equal(navigations, before, "no reload");
      await tab.waitForFunction("window.shown.length > 0", undefined, {
        timeout: 10_000,
      });
      const shown = (await tab.evaluate("window.shown")) as Array<{ title: string; body: string }>;
      assert.equal(shown.length, 1, JSON.stringify(shown));
      assert.match(shown[0]!.title, /^Question on Write the lexer/);
      assert.equal(shown[0]!.body, "May the lexer drop tabs?");
    } finally {
      await context.close();
    }
  });

  it("activity: searches the whole history on the server, beyond the first page", async () => {
    const billing = (await call("arbeit_task_create", { title: "Billing: send invoices" })).task.id;
    const noise = (await call("arbeit_task_create", { title: "Tidy the docs" })).task.id;
    for (let batch = 0; batch < 2; batch++)
      await call("arbeit_batch", {
        operations: Array.from({ length: 60 }, (_, i) => ({
          tool: "arbeit_context_add",
          args: { task_id: noise, type: "note", content: `note ${batch * 60 + i}` },
        })),
      });
    await page.goto(`${dashboard.origin}/activity`);
    const activity = page.locator('[data-view="activity"]');
    await activity.locator("li[data-seq]").first().waitFor();
    assert.equal(await activity.locator(`li[data-task-id="${billing}"]`).count(), 0, "not on the first page");

    await page.getByRole("searchbox", { name: "Search" }).fill("billing: SEND");
    await activity.locator(`li[data-task-id="${billing}"]`).first().waitFor();
    assert.match(page.url(), /[?&]q=billing/);
    assert.equal(await activity.locator(`li[data-task-id="${noise}"]`).count(), 0);

    // Filters combine, from the URL: the agent and the event type.
    await page.goto(`${dashboard.origin}/activity?agent=planner&event=task_created&q=billing`);
    await activity.locator(`li[data-task-id="${billing}"]`).first().waitFor();
    const types = await activity.locator("li[data-seq] strong").allTextContents();
    assert.deepEqual([...new Set(types)], ["task_created"]);

    // The cursor pages back through a search: the second page holds the oldest notes.
    await page.goto(`${dashboard.origin}/activity?task=${noise}&event=context_added`);
    await activity.locator("li[data-seq]").nth(99).waitFor();
    assert.equal(await activity.getByText("note 0", { exact: false }).count(), 0);
    await activity.getByRole("button", { name: "Older" }).click();
    await activity.locator("li[data-seq]").nth(119).waitFor();
    assert.equal(await activity.locator("li[data-seq]").count(), 120);
  });

  it("board: swimlanes by epic, collapsed lanes kept in the URL, counts true to the filters", async () => {
    await page.goto(`${dashboard.origin}/board?lanes=epic`);
    const board = page.locator('[data-view="board"]');
    const lane = board.getByRole("region", { name: /Billing epic/ });
    await lane.locator(`[data-task-id="${lexer}"]`).waitFor();
    assert.equal(await lane.locator(`[data-task-id="${epic}"]`).count(), 1, "an epic leads its own lane");
    const loose = board.getByRole("region", { name: /No epic/ });
    await loose.getByText("Half-done migration").waitFor();
    assert.equal(await lane.getByText("Half-done migration").count(), 0);

    await lane.getByRole("button", { name: /Billing epic/ }).click();
    await page.waitForURL(new RegExp(`[?&]collapsed=${epic}`));
    assert.equal(await lane.locator("[data-task-id]").count(), 0, "a collapsed lane shows no cards");
    assert.equal(await lane.getByRole("button", { name: /Billing epic/ }).getAttribute("aria-expanded"), "false");
    // A filter keeps the lanes and what is collapsed; the lane counts only what passes it.
    await page.getByRole("searchbox", { name: "Search" }).fill("lexer");
    await page.waitForURL(/[?&]q=lexer/);
    assert.match(page.url(), new RegExp(`lanes=epic.*collapsed=${epic}|collapsed=${epic}.*lanes=epic`));
    assert.equal((await lane.locator(".count").first().textContent())?.trim(), "1");
    await page.reload();
    await board.getByRole("region", { name: /Billing epic/ }).waitFor();
    assert.equal(
      await board
        .getByRole("region", { name: /Billing epic/ })
        .locator("[data-task-id]")
        .count(),
      0,
    );
    await board
      .getByRole("region", { name: /Billing epic/ })
      .getByRole("button")
      .click();
    await board
      .getByRole("region", { name: /Billing epic/ })
      .locator(`[data-task-id="${lexer}"]`)
      .waitFor();
  });
}

describe("mission control in Chromium, on SQLite", { skip: chromiumSkip() }, () => missionSuite("sqlite"));
describe("mission control in Chromium, on Postgres", { skip: chromiumSkip() || (await postgresSkip()) }, () =>
  missionSuite("postgres"),
);
