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
 * The dependency graph read by a person in a real headless Chromium against the real `arbeit ui`:
 * a chain too long to read when fitted to the screen starts at a scale where full titles read,
 * Fit draws shapes rather than unreadable text, Find centres a task, and focus mode draws one
 * task's blockers and dependants, n levels each way.
 */

const CHAIN = 30;
const titleOf = (i: number) => `Step ${i}: move the billing ledger to the double-entry schema and backfill it`;

function graphSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let ids: string[] = [];
  let epic: string;

  const graph = () => page.locator('[data-view="graph"]');
  const node = (i: number) => graph().locator(`[data-task-id="${ids[i]}"]`);
  const drawnIds = async () =>
    (
      await graph()
        .locator("svg [data-task-id]")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-task-id")))
    )
      .map(String)
      .sort();
  /** How far the middle of task i is from the middle of the graph's drawing area, in pixels. */
  const offCentre = async (i: number) => {
    const box = (await node(i).locator("rect").boundingBox())!;
    const svg = (await graph().locator("svg").first().boundingBox())!;
    return Math.hypot(
      box.x + box.width / 2 - (svg.x + svg.width / 2),
      box.y + box.height / 2 - (svg.y + svg.height / 2),
    );
  };

  before(async () => {
    project = await uiProject(engine);
    // One chain: task i blocks task i + 1; the first five are children of an epic.
    const operations = [
      { tool: "arbeit_task_create", ref: "epic", args: { title: "Billing epic", type: "epic" } },
      ...Array.from({ length: CHAIN }, (_, i) => ({
        tool: "arbeit_task_create",
        ref: `t${i}`,
        args: {
          title: titleOf(i),
          ...(i > 0 ? { blocked_by: [`$t${i - 1}`] } : {}),
          ...(i < 5 ? { parent_id: "$epic" } : {}),
        },
      })),
    ];
    const batch = await project.cli(
      ["call", "arbeit_batch", "-", "--session", "ses-planner", "--agent", "planner"],
      JSON.stringify({ operations }),
    );
    [epic, ...ids] = batch.results.map((result: { data: { task: { id: string } } }) => result.data.task.id);
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

  it("starts a graph too long to fit readably at a scale where full titles read, wrapped", async () => {
    await page.goto(`${dashboard.origin}/graph`);
    await graph().locator('svg[data-zoom="near"]').waitFor();
    assert.equal((await drawnIds()).length, CHAIN);
    // The start of the critical path is on screen, its whole title in lines, none cut.
    const lines = await node(0).locator("text:not(.id) tspan").allTextContents();
    assert.ok(lines.length > 1, "a long title wraps onto more than one line");
    assert.equal(lines.join(" "), titleOf(0));
    assert.ok(!lines.join("").includes("…"));
    const text = (await node(0).locator("text:not(.id) tspan").first().boundingBox())!;
    assert.ok(text.height >= 9, `text ${text.height}px high on screen`);
    const svg = (await graph().locator("svg").first().boundingBox())!;
    const box = (await node(0).locator("rect").boundingBox())!;
    assert.ok(box.x >= svg.x && box.x + box.width <= svg.x + svg.width, "the task is on screen");
  });

  it("Fit draws every task as a shape, with no text too small to read, and zooming in brings the text back", async () => {
    await page.goto(`${dashboard.origin}/graph`);
    await graph().locator('svg[data-zoom="near"]').waitFor();
    await graph().getByRole("button", { name: "Fit" }).click();
    await graph().locator('svg[data-zoom="far"]').waitFor();
    assert.equal(await graph().locator("svg [data-task-id] rect").count(), CHAIN);
    assert.equal(await graph().locator("svg text").count(), 0, "no text drawn when it could not be read");
    // Each node still names its task to a screen reader and on hover.
    assert.match((await node(3).getAttribute("aria-label")) ?? "", new RegExp(`^Step 3:.*${ids[3]}`));
    for (let i = 0; i < 12 && (await graph().locator('svg[data-zoom="near"]').count()) === 0; i++)
      await graph().getByRole("button", { name: "Zoom in" }).click();
    await graph().locator('svg[data-zoom="near"]').waitFor();
    const size = await graph()
      .locator("svg text:not(.id) tspan")
      .first()
      .evaluate((el) => el.getBoundingClientRect().height);
    assert.ok(size >= 9, `text ${size}px high once it is drawn again`);
  });

  it("Find centres a task by its title or its id, zoomed to read, highlighted and focused", async () => {
    await page.goto(`${dashboard.origin}/graph`);
    await graph().locator('svg[data-zoom="near"]').waitFor();
    const find = graph().getByRole("search", { name: "Find a task in the graph" });
    assert.ok((await offCentre(20)) > 400, "task 20 starts far from the middle");
    await find.getByRole("searchbox").fill("step 20:");
    await find.getByRole("searchbox").press("Enter");
    await graph().locator(`.node.found[data-task-id="${ids[20]}"]`).waitFor();
    assert.ok((await offCentre(20)) < 5, "task 20 is in the middle");
    assert.equal(
      await page.evaluate(() => (globalThis as any).document.activeElement?.getAttribute("data-task-id")),
      ids[20],
    );
    await graph().locator('svg[data-zoom="near"]').waitFor();

    // From far out, by id: zoomed in to read as well.
    await graph().getByRole("button", { name: "Fit" }).click();
    await graph().locator('svg[data-zoom="far"]').waitFor();
    await find.getByRole("searchbox").fill(ids[7]!);
    await find.getByRole("button", { name: "Centre" }).click();
    await graph().locator(`.node.found[data-task-id="${ids[7]}"]`).waitFor();
    await graph().locator('svg[data-zoom="near"]').waitFor();
    assert.ok((await offCentre(7)) < 5, "task 7 is in the middle");
    assert.equal(await graph().locator(".node.found").count(), 1);

    await find.getByRole("searchbox").fill("no such task anywhere");
    await find.getByRole("searchbox").press("Enter");
    await graph().getByRole("status").getByText("No task drawn here matches “no such task anywhere”.").waitFor();
  });

  it("focus mode draws a task's blockers and dependants, n levels each way, kept in the URL", async () => {
    await page.goto(`${dashboard.origin}/graph?focus=${ids[10]}&depth=2`);
    await graph().locator(`.node.focus[data-task-id="${ids[10]}"]`).waitFor();
    assert.deepEqual(await drawnIds(), ids.slice(8, 13).sort());
    // Five tasks fit on the screen readably: the whole picture, with its text.
    await graph().locator('svg[data-zoom="near"]').waitFor();
    assert.equal((await node(10).locator("tspan").allTextContents()).join(" "), titleOf(10));

    await graph().getByRole("link", { name: "One level more" }).click();
    await graph().locator(`[data-task-id="${ids[13]}"]`).waitFor();
    assert.equal(new URL(page.url()).searchParams.get("depth"), "3");
    assert.deepEqual(await drawnIds(), ids.slice(7, 14).sort());

    await graph().getByRole("link", { name: "Whole graph" }).click();
    await graph().locator(`[data-task-id="${ids[0]}"]`).waitFor();
    assert.equal((await drawnIds()).length, CHAIN);
    assert.equal(new URL(page.url()).searchParams.get("focus"), null);

    // From a found task to its neighbourhood: one level each way by default is two.
    const find = graph().getByRole("search", { name: "Find a task in the graph" });
    await find.getByRole("searchbox").fill(ids[0]!);
    await find.getByRole("searchbox").press("Enter");
    await graph()
      .getByRole("link", { name: `Only ${ids[0]}'s blockers and dependants` })
      .click();
    await graph().locator(`.node.focus[data-task-id="${ids[0]}"]`).waitFor();
    assert.deepEqual(await drawnIds(), ids.slice(0, 3).sort());
  });

  it("groups tasks by parent in a box, collapsible to one node and expandable again, kept in the URL", async () => {
    await page.goto(`${dashboard.origin}/graph`);
    await graph().getByRole("link", { name: "Group by parent" }).click();
    const cluster = graph().locator(`[data-cluster="${epic}"]`);
    await cluster.waitFor();
    const box = (await cluster.locator("rect").boundingBox())!;
    for (const i of [0, 4]) {
      const inner = (await node(i).locator("rect").boundingBox())!;
      assert.ok(
        inner.x >= box.x && inner.y >= box.y && inner.x + inner.width <= box.x + box.width + 0.5,
        `task ${i} is inside its epic's box`,
      );
    }
    assert.equal(await graph().locator("[data-cluster]").count(), 1, "one box: the other tasks have no parent");

    await cluster.getByRole("link", { name: "Collapse Billing epic" }).click();
    const group = graph().locator(`[data-group="${epic}"]`);
    await group.waitFor();
    assert.equal(new URL(page.url()).searchParams.get("collapsed"), epic);
    assert.match((await group.getAttribute("aria-label")) ?? "", /^Expand Billing epic \(5 tasks\)$/);
    assert.equal(await node(0).count(), 0, "the epic's tasks are inside its node");
    assert.equal((await drawnIds()).length, CHAIN - 5);
    // The chain goes on from the collapsed group to the task its last member blocks.
    assert.equal(await graph().locator(`[data-edge="group:${epic}>${ids[5]}"]`).count(), 1);

    await group.click();
    await node(0).waitFor();
    assert.equal(await group.count(), 0);
    assert.equal(new URL(page.url()).searchParams.get("collapsed"), null);
    await graph().getByRole("link", { name: "Ungroup" }).click();
    await cluster.waitFor({ state: "detached" });
  });
}

describe("the graph in Chromium, on SQLite", { skip: chromiumSkip() }, () => graphSuite("sqlite"));
describe("the graph in Chromium, on Postgres", { skip: chromiumSkip() || (await postgresSkip()) }, () =>
  graphSuite("postgres"),
);
