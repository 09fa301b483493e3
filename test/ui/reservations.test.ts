import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { postgresSkip } from "../helpers/postgres.js";
import { chromiumSkip, type Dashboard, type Engine, signIn, signOut, type UiProject, uiProject } from "./harness.js";

/**
 * File reservations on the dashboard, in a real headless Chromium against the real `arbeit ui`:
 * the agents view lists them beside the claims (files, mode, holder, task, lease), and a person
 * breaks one there: the reservation is gone from the store and the log names the holder.
 */

const HOLDER = "ses-agent-holder";

function reservationsSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let task: string;

  const call = (tool: string, args: unknown, session = HOLDER, agent = "claude-code") =>
    project.cli(["call", tool, "-", "--session", session, "--agent", agent], JSON.stringify(args));

  before(async () => {
    project = await uiProject(engine);
    task = (await call("arbeit_task_create", { title: "Rework sessions" })).task.id;
    await call("arbeit_task_start_work", { task_id: task });
    await call("arbeit_task_claim", { task_id: task, paths: ["src/auth/**"] });
    await call("arbeit_task_claim", { task_id: task, paths: ["docs/"], shared: true });
    ({ dashboard, browser, page } = await signIn(project));
  });
  after(() => signOut({ dashboard, browser, page }, project));

  it("lists the live reservations beside the claims: files, mode, holder, task and lease", async () => {
    await page.goto(`${dashboard.origin}/agents`);
    const section = page
      .locator('[data-view="agents"] section.panel')
      .filter({ has: page.getByRole("heading", { name: /File reservations/ }) });
    const exclusive = section.locator('[data-pattern="src/auth/**"]');
    await exclusive.waitFor();
    const text = (await exclusive.textContent()) ?? "";
    assert.match(text, /exclusive/);
    assert.match(text, /claude-code/);
    assert.ok(text.includes(HOLDER), text);
    assert.ok(text.includes(task), text);
    assert.match(text, /left/);
    assert.match(
      (await section.locator('[data-pattern="docs/**"], [data-pattern="docs"]').first().textContent()) ?? "",
      /shared/,
    );
  });

  it("breaks a reservation on a person's word: gone from the store, logged as forced naming the holder", async () => {
    await page.goto(`${dashboard.origin}/agents`);
    const button = page.getByRole("button", { name: "Break reservation of src/auth/**" });
    await button.click();
    await page.locator('[data-pattern="src/auth/**"]').waitFor({ state: "detached", timeout: 10_000 });
    const listed = await project.cli(["call", "arbeit_query", "-"], JSON.stringify({ query: "reservations" }));
    // The shared one stays.
    assert.deepEqual(
      listed.reservations.map((r: { pattern: string; mode: string }) => r.mode),
      ["shared"],
      JSON.stringify(listed),
    );
    const events = await project.cli(
      ["call", "arbeit_query", "-"],
      JSON.stringify({ query: "events", params: { event_types: ["reservation_released"] } }),
    );
    const released = (events.events ?? events.results ?? []).find((e: any) => e.payload?.reason === "forced");
    assert.ok(released, JSON.stringify(events));
    assert.equal(released.agent, "human:alice");
    assert.ok(JSON.stringify(released.payload).includes(HOLDER), JSON.stringify(released.payload));
  });
}

describe("file reservations on the dashboard, in Chromium, on SQLite", { skip: chromiumSkip() }, () =>
  reservationsSuite("sqlite"),
);
describe(
  "file reservations on the dashboard, in Chromium, on Postgres",
  {
    skip: chromiumSkip() || (await postgresSkip()),
  },
  () => reservationsSuite("postgres"),
);
