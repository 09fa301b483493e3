import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { letLeaseRunOut } from "../helpers/expiry.js";
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
 * The browser's own notifications for stale claims and followed tasks, in a real headless Chromium
 * (notifications granted) against the real `arbeit ui`, agents as CLI processes: a person follows
 * tasks from the task page, and the open dashboard tells them once when one is completed, and once
 * when a claim's lease runs out; nothing that happened before the page opened, and one
 * notification for several open tabs.
 */

interface Shown {
  title: string;
  body: string;
}

/** Records each notification a page raises (the browser's own stays out of reach of a test). */
const RECORDER = `{
  const Native = window.Notification;
  window.shown = [];
  window.Notification = class extends Native {
    constructor(title, options) {
      super(title, options);
      window.shown.push({ title, body: options?.body ?? "" });
    }
  };
}`;

function notificationSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let context: BrowserContext;
  const tabs: Page[] = [];
  const ids: Record<string, string> = {};

  const call = (tool: string, args: unknown, session = "ses-planner", agent = "planner") =>
    project.cli(["call", tool, "-", "--session", session, "--agent", agent], JSON.stringify(args));
  /** Every notification of every open tab. */
  const allShown = async () =>
    (await Promise.all(tabs.map((tab) => tab.evaluate("window.shown") as Promise<Shown[]>))).flat();
  /** Waits until some open tab shows a notification titled `title`. */
  const until = async (title: string) => {
    for (let i = 0; i < 200; i++) {
      if ((await allShown()).some((shown) => shown.title === title)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`no notification "${title}": ${JSON.stringify(await allShown())}`);
  };
  /** Opens a tab at `path` and waits for its first read of what to notify of: the page is open. */
  const open = async (path: string) => {
    const tab = await context.newPage();
    const read = tab.waitForResponse((response) => new URL(response.url()).pathname === "/api/notices");
    await tab.goto(`${dashboard.origin}${path}`);
    await read;
    tabs.push(tab);
    return tab;
  };
  /** Claims `task` for one second: the page, open, must notice its end on its own clock. */
  const claimBriefly = async (task: string, session: string, agent: string) => {
    const claimed = await call("arbeit_task_claim", { task_id: task, lease_seconds: 1 }, session, agent);
    assert.ok(claimed.task?.lease_expires_at ?? claimed.lease_expires_at, JSON.stringify(claimed));
  };

  before(async () => {
    project = await uiProject(engine);
    for (const [name, title] of [
      ["earlier", "Done before the page opened"],
      ["watched", "Ship the parser"],
      ["other", "Nobody follows this"],
      ["barrier", "Tidy the changelog"],
      ["early", "Stale before the page opened"],
      ["sleepy", "Rename the config keys"],
      ["next", "Something to claim"],
    ])
      ids[name!] = (await call("arbeit_task_create", { title })).task.id;
    dashboard = await startDashboard(project.dir, { env: project.env, args: ["--as", "alice"] });
    browser = await launchChromium();
    context = await browser.newContext();
    await context.grantPermissions(["notifications"], { origin: dashboard.origin });
    await context.addInitScript({ content: RECORDER });
    // The first visit takes the token from the printed URL; later tabs find it in the browser.
    const first = await context.newPage();
    await first.goto(dashboard.url);
    await first.locator("[data-view]").first().waitFor();
    await first.close();
  });
  after(async () => {
    await browser?.close();
    await dashboard?.stop();
    await project?.close();
  });

  it("follows tasks from the task page, kept in this browser", async () => {
    const tab = await context.newPage();
    try {
      for (const name of ["earlier", "watched", "barrier"]) {
        await tab.goto(`${dashboard.origin}/task/${ids[name]}`);
        const follow = tab.locator(`[data-view="task"][data-task-id="${ids[name]}"]`).getByRole("button", {
          name: "Follow",
          exact: true,
        });
        await follow.click();
        await tab.getByRole("button", { name: "Following" }).waitFor();
        assert.equal(await tab.getByRole("button", { name: "Following" }).getAttribute("aria-pressed"), "true");
      }
      const kept = JSON.parse((await tab.evaluate(`localStorage.getItem("arbeit-followed")`)) as string);
      assert.deepEqual([...kept].sort(), [ids.earlier, ids.watched, ids.barrier].sort());
      // Unfollowing and following again leaves it followed once.
      await tab.getByRole("button", { name: "Following" }).click();
      await tab.getByRole("button", { name: "Follow", exact: true }).click();
      await tab.getByRole("button", { name: "Following" }).waitFor();
    } finally {
      await tab.close();
    }
  });

  it("tells once, in one tab of two, that a followed task was completed; nothing from before the page opened", async () => {
    // Before any dashboard page is open: a followed task completed, a claim gone stale.
    await call("arbeit_task_update", { task_id: ids.earlier, status: "completed" }, "ses-agent", "claude-code");
    await call("arbeit_task_claim", { task_id: ids.early! }, "ses-early", "early-bird");
    await letLeaseRunOut({ cwd: project.dir, env: project.env }, ids.early!);

    await open("/");
    await open("/board");
    await call("arbeit_task_update", { task_id: ids.other, status: "completed" }, "ses-agent", "claude-code");
    await call("arbeit_task_update", { task_id: ids.watched, status: "completed" }, "ses-agent", "claude-code");
    await until("Completed: Ship the parser");
    const shown = await allShown();
    assert.deepEqual(shown, [
      { title: "Completed: Ship the parser", body: "claude-code completed a task you follow." },
    ]);
  });

  it("tells once that a claim went stale when its lease ran out, and not again when it is swept", async () => {
    await claimBriefly(ids.sleepy!, "ses-sleepy", "sleepy");
    // No event marks a lease's end: the page asks when the first live lease runs out.
    await until("Stale claim on Rename the config keys");
    // Another claim sweeps both stale claims (each recorded as claim_expired): no news for either.
    await call("arbeit_task_claim", { task_id: ids.next }, "ses-other", "other-agent");
    const swept = (await project.cli(["task", "get", ids.sleepy!])).task;
    assert.equal(swept.lease_expires_at, null, "the sweep freed it");
    // A later notification, after the sweep's events, shows the page has read past them.
    await call("arbeit_task_update", { task_id: ids.barrier, status: "completed" }, "ses-agent", "claude-code");
    await until("Completed: Tidy the changelog");
    const shown = await allShown();
    assert.deepEqual(
      shown.map((note) => note.title),
      ["Completed: Ship the parser", "Stale claim on Rename the config keys", "Completed: Tidy the changelog"],
    );
    assert.equal(shown[1]!.body, "The lease of sleepy (session ses-sleepy) ran out.");
  });
}

describe("notifications in Chromium, on SQLite", { skip: chromiumSkip() }, () => notificationSuite("sqlite"));
describe("notifications in Chromium, on Postgres", { skip: chromiumSkip() || (await postgresSkip()) }, () =>
  notificationSuite("postgres"),
);
