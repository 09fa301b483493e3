import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { postgresSkip } from "../helpers/postgres.js";
import { chromiumSkip, type Dashboard, type Engine, signIn, signOut, type UiProject, uiProject } from "./harness.js";

/**
 * The dependency graph read by a person in a real headless Chromium against the real `arbeit ui`,
 * over a project of 200 tasks: a chain too long to read when fitted to the screen starts at a
 * scale where full titles read, Fit draws shapes rather than unreadable text, Find centres a
 * task, focus mode draws one task's blockers and dependants, n levels each way, and grouping
 * by parent or epic draws nested boxes that collapse to one node, kept in the URL.
 * ARBEIT_DOCS_SCREENSHOTS=1 also writes the grouped graph's screenshot docs/dashboard.md shows.
 */

type Box = { x: number; y: number; width: number; height: number };

const CHAIN = 30;
const titleOf = (i: number) => `Step ${i}: move the billing ledger to the double-entry schema and backfill it`;
/** Epics beside the chain, each with four chains of four tasks. */
const AREAS = 10;
const AREA_TASKS = 16;
/** Tasks with an edge: the chain and the areas' chains. */
const DRAWN = CHAIN + AREAS * AREA_TASKS;

function graphSuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let browser: Browser;
  let page: Page;
  let ids: string[] = [];
  /** Platform epic > Billing epic > Ledger work (a plain parent), see `before`. */
  let platform: string;
  let epic: string;
  let ledger: string;

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
    const batch = async (operations: unknown[]): Promise<[string, string, string, ...string[]]> =>
      (
        await project.cli(
          ["call", "arbeit_batch", "-", "--session", "ses-planner", "--agent", "planner"],
          JSON.stringify({ operations }),
        )
      ).results.map((result: { data: { task: { id: string } } }) => result.data.task.id);
    // One chain: task i blocks task i + 1. Tasks 0-4 are children of the Billing epic, 5-7 of a
    // plain parent inside it, 8-9 of the Platform epic that holds the Billing epic.
    const parentOf = (i: number) => (i < 5 ? "$epic" : i < 8 ? "$ledger" : i < 10 ? "$platform" : undefined);
    [platform, epic, ledger, ...ids] = await batch([
      { tool: "arbeit_task_create", ref: "platform", args: { title: "Platform epic", type: "epic" } },
      {
        tool: "arbeit_task_create",
        ref: "epic",
        args: { title: "Billing epic", type: "epic", parent_id: "$platform" },
      },
      { tool: "arbeit_task_create", ref: "ledger", args: { title: "Ledger work", parent_id: "$epic" } },
      ...Array.from({ length: CHAIN }, (_, i) => ({
        tool: "arbeit_task_create",
        ref: `t${i}`,
        args: {
          title: titleOf(i),
          ...(i > 0 ? { blocked_by: [`$t${i - 1}`] } : {}),
          ...(parentOf(i) ? { parent_id: parentOf(i) } : {}),
        },
      })),
    ]);
    // The other areas of the project, five epics to a batch (a batch holds up to 100 writes).
    for (let first = 0; first < AREAS; first += 5)
      await batch(
        Array.from({ length: 5 }, (_, a) => [
          { tool: "arbeit_task_create", ref: `a${a}`, args: { title: `Area ${first + a}`, type: "epic" } },
          ...Array.from({ length: AREA_TASKS }, (_, j) => ({
            tool: "arbeit_task_create",
            ref: `a${a}t${j}`,
            args: {
              title: `Area ${first + a} task ${j}`,
              parent_id: `$a${a}`,
              ...(j % 4 > 0 ? { blocked_by: [`$a${a}t${j - 1}`] } : {}),
            },
          })),
        ]).flat(),
      );
    ({ dashboard, browser, page } = await signIn(project));
  });
  after(() => signOut({ dashboard, browser, page }, project));

  it("starts a graph too long to fit readably at a scale where full titles read, wrapped", async () => {
    await page.goto(`${dashboard.origin}/graph`);
    await graph().locator('svg[data-zoom="near"]').waitFor();
    assert.equal((await drawnIds()).length, DRAWN);
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
    assert.equal(await graph().locator("svg [data-task-id] rect").count(), DRAWN);
    assert.equal(await graph().locator("svg text").count(), 0, "no text drawn when it could not be read");
    // Each node still names its task to a screen reader and on hover.
    assert.match((await node(3).getAttribute("aria-label")) ?? "", new RegExp(`^Step 3:.*${ids[3]}`));
    // The wheel zooms in round the pointer, held over task 3.
    for (let i = 0; i < 40 && (await graph().locator('svg[data-zoom="near"]').count()) === 0; i++) {
      const at = (await node(3).locator("rect").boundingBox())!;
      await page.mouse.move(at.x + at.width / 2, at.y + at.height / 2);
      await page.mouse.wheel(0, -100);
    }
    await graph().locator('svg[data-zoom="near"]').waitFor();
    const size = await node(3)
      .locator("text:not(.id) tspan")
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
    assert.equal((await drawnIds()).length, DRAWN);
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

  /** The screen box of a group's frame, or of a task's node. */
  const frame = async (parent: string) => (await graph().locator(`[data-cluster="${parent}"] > rect`).boundingBox())!;
  const inside = (inner: Box, outer: Box) =>
    inner.x >= outer.x - 0.5 &&
    inner.y >= outer.y - 0.5 &&
    inner.x + inner.width <= outer.x + outer.width + 0.5 &&
    inner.y + inner.height <= outer.y + outer.height + 0.5;
  const grouping = () =>
    graph()
      .locator("label", { hasText: /^Group/ })
      .locator("select");

  it("grouped by epic, draws each epic's tasks in a box, an epic's box inside its own epic's, titles read whole", async () => {
    await page.goto(`${dashboard.origin}/graph`);
    await graph().locator('svg[data-zoom="near"]').waitFor();
    await grouping().selectOption("epic");
    await graph().locator(`[data-cluster="${epic}"]`).waitFor();
    assert.equal(new URL(page.url()).searchParams.get("group"), "epic");
    // Platform, Billing and the ten areas; the plain parent (Ledger work) is no box of its own.
    assert.equal(await graph().locator("[data-cluster]").count(), 2 + AREAS);
    assert.equal(await graph().locator(`[data-cluster="${ledger}"]`).count(), 0);
    assert.equal(await graph().locator(`[data-cluster="${epic}"]`).getAttribute("data-depth"), "1");
    assert.ok(inside(await frame(epic), await frame(platform)), "the Billing box is inside the Platform box");
    for (const i of [0, 4, 5, 7]) {
      const box = (await node(i).locator("rect").boundingBox())!;
      assert.ok(inside(box, await frame(epic)), `task ${i} is inside the Billing box`);
    }
    for (const i of [8, 9]) {
      const box = (await node(i).locator("rect").boundingBox())!;
      assert.ok(inside(box, await frame(platform)), `task ${i} is inside the Platform box`);
      assert.ok(!inside(box, await frame(epic)), `task ${i} is outside the Billing box`);
    }
    const box = (await node(12).locator("rect").boundingBox())!;
    assert.ok(!inside(box, await frame(platform)), "a task with no epic is in no box");
    // 200 tasks, grouped: the default zoom reads the start of the critical path whole.
    await graph().locator('svg[data-zoom="near"]').waitFor();
    if (process.env.ARBEIT_DOCS_SCREENSHOTS === "1" && engine === "sqlite")
      await page.screenshot({
        path: fileURLToPath(new URL("../../docs/images/dashboard-graph-by-epic.png", import.meta.url)),
      });
    assert.equal((await node(0).locator("text:not(.id) tspan").allTextContents()).join(" "), titleOf(0));
    const text = (await node(0).locator("text:not(.id) tspan").first().boundingBox())!;
    assert.ok(text.height >= 9, `text ${text.height}px high on screen`);
    const svg = (await graph().locator("svg").first().boundingBox())!;
    const first = (await node(0).locator("rect").boundingBox())!;
    assert.ok(first.x >= svg.x && first.x + first.width <= svg.x + svg.width, "the task is on screen");
  });

  it("collapses an epic to one node that counts its tasks and carries their edges, kept in the URL", async () => {
    await page.goto(`${dashboard.origin}/graph?group=epic`);
    const billing = graph().locator(`[data-cluster="${epic}"]`);
    await billing.waitFor();
    await billing.getByRole("link", { name: "Collapse Billing epic (8 tasks)" }).click();
    const group = graph().locator(`[data-group="${epic}"]`);
    await group.waitFor();
    assert.equal(new URL(page.url()).searchParams.get("collapsed"), epic);
    assert.equal(new URL(page.url()).searchParams.get("group"), "epic");
    assert.equal(await group.getAttribute("aria-label"), "Expand Billing epic (8 tasks)");
    assert.equal(await group.locator("text.id").textContent(), "0 of 8 completed");
    for (const i of [0, 5, 7]) assert.equal(await node(i).count(), 0, `task ${i} is inside the collapsed node`);
    assert.equal((await drawnIds()).length, DRAWN - 8);
    assert.equal(await billing.count(), 0);
    // The collapsed node stays in its epic's box, and the chain goes on from it to task 8.
    assert.ok(inside((await group.locator("rect").boundingBox())!, await frame(platform)));
    assert.equal(await graph().locator(`[data-edge="group:${epic}>${ids[8]}"]`).count(), 1);
    assert.match(
      (await graph().locator(`[data-edge="group:${epic}>${ids[8]}"]`).getAttribute("class")) ?? "",
      /critical/,
    );

    // Find reaches a task inside a collapsed box: its node is centred.
    const find = graph().getByRole("search", { name: "Find a task in the graph" });
    await find.getByRole("searchbox").fill("step 3:");
    await find.getByRole("searchbox").press("Enter");
    await graph().locator(`.node.found[data-group="${epic}"]`).waitFor();

    // The outer epic collapsed too: its node stands for everything inside it.
    await graph()
      .locator(`[data-cluster="${platform}"]`)
      .getByRole("link", { name: "Collapse Platform epic (10 tasks)" })
      .click();
    const outer = graph().locator(`[data-group="${platform}"]`);
    await outer.waitFor();
    assert.equal(await group.count(), 0, "the inner epic is inside the outer one's node");
    assert.equal(new URL(page.url()).searchParams.get("collapsed"), `${epic},${platform}`);
    assert.equal((await drawnIds()).length, DRAWN - 10);

    // The URL alone restores it all in a new page load.
    await page.goto(page.url());
    await outer.waitFor();
    assert.equal(await grouping().inputValue(), "epic");
    assert.equal(await outer.getAttribute("aria-label"), "Expand Platform epic (10 tasks)");
    assert.equal(await graph().locator(`[data-edge="group:${platform}>${ids[10]}"]`).count(), 1);

    // Expanding the outer node shows the inner epic still collapsed, inside it; then all of it.
    await outer.click();
    await group.waitFor();
    assert.equal(new URL(page.url()).searchParams.get("collapsed"), epic);
    assert.ok(inside((await group.locator("rect").boundingBox())!, await frame(platform)));
    await group.click();
    await node(0).waitFor();
    assert.equal(new URL(page.url()).searchParams.get("collapsed"), null);
    assert.equal((await drawnIds()).length, DRAWN);
  });

  it("grouped by parent, nests each parent's box in its own parent's, and ungroups", async () => {
    await page.goto(`${dashboard.origin}/graph`);
    await grouping().selectOption("parent");
    const ledgerBox = graph().locator(`[data-cluster="${ledger}"]`);
    await ledgerBox.waitFor();
    assert.equal(new URL(page.url()).searchParams.get("group"), "parent");
    assert.equal(await graph().locator("[data-cluster]").count(), 3 + AREAS);
    assert.equal(await ledgerBox.getAttribute("data-depth"), "2");
    assert.ok(inside(await frame(ledger), await frame(epic)), "Ledger work's box is inside the Billing box");
    assert.ok(inside(await frame(epic), await frame(platform)), "the Billing box is inside the Platform box");
    for (const i of [5, 7]) assert.ok(inside((await node(i).locator("rect").boundingBox())!, await frame(ledger)));
    assert.ok(!inside((await node(4).locator("rect").boundingBox())!, await frame(ledger)));

    // Its heading is off screen at first: Find brings the box's middle task to the centre.
    const find = graph().getByRole("search", { name: "Find a task in the graph" });
    await find.getByRole("searchbox").fill("step 6:");
    await find.getByRole("searchbox").press("Enter");
    await graph().locator(`.node.found[data-task-id="${ids[6]}"]`).waitFor();
    await ledgerBox.getByRole("link", { name: "Collapse Ledger work (3 tasks)" }).click();
    await graph().locator(`[data-group="${ledger}"]`).waitFor();
    assert.equal((await drawnIds()).length, DRAWN - 3);
    await grouping().selectOption("");
    await graph().locator("[data-cluster]").first().waitFor({ state: "detached" });
    assert.equal(new URL(page.url()).searchParams.get("group"), null);
    assert.equal(new URL(page.url()).searchParams.get("collapsed"), null, "a new grouping starts expanded");
    assert.equal((await drawnIds()).length, DRAWN);
  });
}

describe("the graph in Chromium, on SQLite", { skip: chromiumSkip() }, () => graphSuite("sqlite"));
describe("the graph in Chromium, on Postgres", { skip: chromiumSkip() || (await postgresSkip()) }, () =>
  graphSuite("postgres"),
);
