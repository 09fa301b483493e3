import assert from "node:assert/strict";
import { it } from "node:test";
import { forEachEngine, type HostileProject } from "../hostile/engines.js";

/**
 * Every query that returns a list takes `limit` and pages with an opaque `cursor`: an answer with
 * more to come carries `next_cursor`, and passing it back returns the rows after the last one
 * shown. The cursor marks a place in the query's order, not a count of rows, so tasks created
 * between two pages neither repeat a row nor hide one.
 */

type Project = HostileProject;

async function page(p: Project, name: string, params: Record<string, unknown>): Promise<any> {
  return p.ok("arbeit_query", { query: name, params });
}

/** Walks a query page by page; returns the ids seen, in order, and how many pages it took. */
async function walk(p: Project, name: string, params: Record<string, unknown>, key = "tasks") {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const answer = await page(p, name, { ...params, ...(cursor === undefined ? {} : { cursor }) });
    pages++;
    ids.push(...answer[key].map((row: any) => row.id));
    assert.equal(answer.has_more, answer.next_cursor !== undefined, "has_more and next_cursor agree");
    cursor = answer.next_cursor;
  } while (cursor !== undefined && pages < 50);
  return { ids, pages };
}

async function create(p: Project, title: string, fields: Record<string, unknown> = {}): Promise<string> {
  return (await p.ok("arbeit_task_create", { title, ...fields })).task.id;
}

forEachEngine("paging through list queries", (project) => {
  it("walks tasks, active_tasks and ready page by page, each row once, in order", async () => {
    const p = await project();
    for (let i = 0; i < 7; i++) await create(p, `task ${i}`, { priority: i % 3 });
    for (const name of ["tasks", "active_tasks", "ready"]) {
      const all = (await page(p, name, { limit: 100 })).tasks.map((t: any) => t.id);
      const { ids, pages } = await walk(p, name, { limit: 3 });
      assert.deepEqual(ids, all, name);
      assert.equal(pages, 3, name);
    }
  });

  it("walks blocked_tasks, blocking_tasks and stale_tasks", async () => {
    const p = await project();
    const blockers: string[] = [];
    for (let i = 0; i < 5; i++) {
      const blocker = await create(p, `blocker ${i}`);
      const blocked = await create(p, `blocked ${i}`);
      await p.ok("arbeit_relationship", { action: "add", from_task_id: blocker, to_task_id: blocked, type: "blocks" });
      blockers.push(blocker);
    }
    for (const [name, params] of [
      ["blocked_tasks", {}],
      ["blocking_tasks", {}],
      ["stale_tasks", { days: 0 }],
    ] as const) {
      const all = (await page(p, name, { ...params, limit: 100 })).tasks.map((t: any) => t.id);
      assert.ok(all.length >= 5, name);
      assert.deepEqual((await walk(p, name, { ...params, limit: 2 })).ids, all, name);
    }
  });

  it("walks children_of and descendants_of", async () => {
    const p = await project();
    const root = await create(p, "root");
    for (let i = 0; i < 4; i++) {
      const child = await create(p, `child ${i}`, { parent_id: root });
      await create(p, `grandchild ${i}`, { parent_id: child });
    }
    for (const name of ["children_of", "descendants_of"]) {
      const all = (await page(p, name, { task_id: root, limit: 100 })).tasks.map((t: any) => t.id);
      assert.equal(all.length, name === "children_of" ? 4 : 8, name);
      assert.deepEqual((await walk(p, name, { task_id: root, limit: 3 })).ids, all, name);
    }
  });

  it("walks the event log and a critical path", async () => {
    const p = await project();
    let previous: string | undefined;
    for (let i = 0; i < 5; i++) {
      const id = await create(p, `step ${i}`);
      if (previous)
        await p.ok("arbeit_relationship", { action: "add", from_task_id: previous, to_task_id: id, type: "blocks" });
      previous = id;
    }
    const events = (await page(p, "events", { limit: 1000 })).events.map((e: any) => e.id);
    assert.deepEqual((await walk(p, "events", { limit: 4 }, "events")).ids, events);
    const path = (await page(p, "critical_path", { limit: 100 })).tasks.map((t: any) => t.id);
    assert.equal(path.length, 5);
    assert.deepEqual((await walk(p, "critical_path", { limit: 2 })).ids, path);
  });

  it("walks tasks_for_file, newest touch first", async () => {
    const p = await project();
    for (let i = 0; i < 5; i++) {
      const id = await create(p, `toucher ${i}`);
      await p.ok("arbeit_task_start_work", { task_id: id });
      await p.service.trackFile({ path: "src/shared.ts", operation: "write" }, p.caller);
      await p.ok("arbeit_task_stop_work", { task_id: id });
    }
    const all = (await page(p, "tasks_for_file", { file_path: "src/shared.ts" })).tasks.map((t: any) => t.id);
    assert.equal(all.length, 5);
    assert.deepEqual((await walk(p, "tasks_for_file", { file_path: "src/shared.ts", limit: 2 })).ids, all);
  });

  it("neither repeats nor skips a row when tasks are created between pages", async () => {
    const p = await project();
    const before: string[] = [];
    for (let i = 0; i < 6; i++) before.push(await create(p, `before ${i}`, { priority: 2 }));
    const first = await page(p, "tasks", { limit: 3 });
    // One sorts ahead of the page already read, one after it.
    await create(p, "urgent newcomer", { priority: 0 });
    const late = await create(p, "late newcomer", { priority: 4 });
    const rest = await walk(p, "tasks", { limit: 3, cursor: first.next_cursor });
    const seen = [...first.tasks.map((t: any) => t.id), ...rest.ids];
    assert.equal(new Set(seen).size, seen.length, "no row twice");
    for (const id of [...before, late]) assert.ok(seen.includes(id), `${id} seen`);
  });

  it("has no next_cursor on the last page", async () => {
    const p = await project();
    await create(p, "only");
    const answer = await page(p, "tasks", {});
    assert.equal(answer.has_more, false);
    assert.equal("next_cursor" in answer, false);
  });

  it("refuses a cursor that was altered or that another query returned (INVALID_ARGUMENT)", async () => {
    const p = await project();
    for (let i = 0; i < 3; i++) await create(p, `task ${i}`);
    const { next_cursor } = await page(p, "tasks", { limit: 1 });
    const flipped = next_cursor.slice(0, 4) + (next_cursor[4] === "A" ? "B" : "A") + next_cursor.slice(5);
    for (const [name, cursor] of [
      ["tasks", flipped],
      ["tasks", "not-a-cursor"],
      ["ready", next_cursor],
    ] as const) {
      const envelope = await p.call("arbeit_query", { query: name, params: { cursor } });
      assert.equal(envelope.success, false, `${name} ${cursor}`);
      const error = (envelope as any).error;
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.match(error.message, /cursor/);
      assert.match(error.suggestions.join(" "), /next_cursor/);
    }
  });

  it("refuses a cursor passed with another list or other filters, which would skip that list's rows (INVALID_ARGUMENT)", async () => {
    const p = await project();
    const parents: string[] = [];
    for (const list of ["front", "back"]) {
      const parent = await create(p, `${list} parent`, { list_id: list });
      parents.push(parent);
      for (let i = 0; i < 3; i++) await create(p, `${list} ${i}`, { list_id: list, parent_id: parent });
    }
    const refused = async (name: string, params: Record<string, unknown>, cursor: string) => {
      const envelope = await p.call("arbeit_query", { query: name, params: { ...params, cursor } });
      assert.equal(envelope.success, false, `${name} ${JSON.stringify(params)}`);
      const error = (envelope as any).error;
      assert.equal(error.code, "INVALID_ARGUMENT");
      assert.match(error.message, /params\.cursor was handed out by \w+ for another list or other filters/);
      assert.match(error.suggestions.join(" "), /same params/);
    };
    const front = (await page(p, "tasks", { list_id: "front", limit: 1 })).next_cursor;
    await refused("tasks", { list_id: "back" }, front);
    const cli = await p.cli([
      "call",
      "arbeit_query",
      JSON.stringify({ query: "tasks", params: { list_id: "back", cursor: front } }),
    ]);
    assert.deepEqual([cli.code, cli.json?.error?.code], [1, "INVALID_ARGUMENT"], cli.stdout + cli.stderr);
    await refused("tasks", { list_id: "front", status: "completed" }, front);
    await refused("tasks", {}, front);
    const open = (await page(p, "active_tasks", { list_id: "front", limit: 1 })).next_cursor;
    await refused("active_tasks", { list_id: "front", parent_id: parents[0] }, open);
    const children = (await page(p, "children_of", { task_id: parents[0], limit: 1 })).next_cursor;
    await refused("children_of", { task_id: parents[1] }, children);
    // An update in the other list: moving a front row to the top would shift the pages of `front`.
    await p.ok("arbeit_task_update", { task_id: parents[1], priority: 1 });
    const events = (await page(p, "events", { task_id: parents[1], limit: 1 })).next_cursor;
    await refused("events", { task_id: parents[0] }, events);
    await refused("events", { task_id: parents[1], event_types: ["task_updated"] }, events);
    // ready's rows are the caller's (its own claims and assignments are in them): so are its cursors.
    const mine = (await page(p, "ready", { limit: 1 })).next_cursor;
    const theirs = await p.call("arbeit_query", { query: "ready", params: { cursor: mine } }, { session: "ses-else" });
    assert.equal((theirs as any).error?.code, "INVALID_ARGUMENT");

    // The same rows asked for alike page on: another limit or view, filters in another order, or
    // the list given by the caller instead of named.
    const next = await page(p, "tasks", { list_id: "front", limit: 10, full: true, cursor: front });
    assert.equal(next.tasks.length, 3);
    const statuses = (await page(p, "tasks", { status: ["open", "in_progress"], limit: 1 })).next_cursor;
    assert.ok((await page(p, "tasks", { status: ["in_progress", "open"], cursor: statuses })).tasks.length > 0);
    const own = await p.ok("arbeit_query", { query: "tasks", params: { limit: 1 } }, { list_id: "front" });
    assert.equal((await page(p, "tasks", { list_id: "front", cursor: own.next_cursor })).tasks.length, 3);
  });
});
