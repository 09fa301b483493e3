import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { alice, ENGINES, type EngineProject, onEngine, openEngineProject, task } from "./helpers.js";

/**
 * A release plan with a known shape:
 *   design -> api -> client -> release
 *   design -> schema -> api
 *   docs (independent), done (completed, blocks nothing that counts)
 */
async function releasePlan(project: EngineProject) {
  const ids: Record<string, string> = {};
  const epic = await task(project, "Release");
  ids.design = await task(project, "design", { parent_id: epic });
  ids.schema = await task(project, "schema", { parent_id: epic, blocked_by: [ids.design] });
  ids.api = await task(project, "api", { parent_id: epic, blocked_by: [ids.design, ids.schema] });
  ids.client = await task(project, "client", { parent_id: epic, blocked_by: [ids.api] });
  ids.release = await task(project, "release", { parent_id: epic, blocked_by: [ids.client] });
  ids.docs = await task(project, "docs", { parent_id: epic });
  ids.outside = await task(project, "outside");
  return { epic, ids };
}

for (const engine of ENGINES)
  describe(`graph queries on ${engine}`, await onEngine(engine), () => {
    let project: EngineProject;
    beforeEach(async () => {
      project = await openEngineProject(engine);
    });
    afterEach(() => project.close());

    const titles = (tasks: Array<{ title: string }>) => tasks.map((t) => t.title);

    it("critical_path follows the longest chain of unfinished work", async () => {
      await releasePlan(project);
      const result = await project.ok("arbeit_query", { query: "critical_path" });
      assert.deepEqual(titles(result.tasks), ["design", "schema", "api", "client", "release"]);
      assert.equal(result.length, 5);
    });

    it("critical_path ignores finished work", async () => {
      const { ids } = await releasePlan(project);
      await project.ok("arbeit_task_update", { task_id: ids.design, status: "completed" });
      await project.ok("arbeit_task_update", { task_id: ids.schema, status: "completed" });
      assert.deepEqual(titles((await project.ok("arbeit_query", { query: "critical_path" })).tasks), [
        "api",
        "client",
        "release",
      ]);
    });

    it("parallel_groups layers unfinished work so each layer can run side by side", async () => {
      const { epic } = await releasePlan(project);
      const { groups } = await project.ok("arbeit_query", { query: "parallel_groups", params: { parent_id: epic } });
      assert.deepEqual(
        groups.map((g: { layer: number; tasks: Array<{ title: string }> }) => [g.layer, titles(g.tasks).sort()]),
        [
          [0, ["design", "docs"]],
          [1, ["schema"]],
          [2, ["api"]],
          [3, ["client"]],
          [4, ["release"]],
        ],
      );
      const all = await project.ok("arbeit_query", { query: "parallel_groups" });
      assert.equal(all.groups[0].count, 4, "the epic and the outside task are also free to start");
    });

    it("bottlenecks ranks tasks by how much unfinished work they hold up", async () => {
      await releasePlan(project);
      const { tasks } = await project.ok("arbeit_query", { query: "bottlenecks" });
      assert.deepEqual(
        tasks.map((t: { title: string; blocks_total: number; blocks_directly: number }) => [
          t.title,
          t.blocks_total,
          t.blocks_directly,
        ]),
        [
          ["design", 4, 2],
          ["schema", 3, 1],
          ["api", 2, 1],
          ["client", 1, 1],
        ],
      );
    });

    it("ready explain says why a task is or is not ready", async () => {
      const { ids } = await releasePlan(project);
      await project.ok("arbeit_task_claim", { task_id: ids.docs }, alice);
      const whyNot = await project.ok("arbeit_query", { query: "ready", params: { task_id: ids.api } });
      assert.equal(whyNot.ready, false);
      assert.match(
        whyNot.reasons[0],
        new RegExp(
          `blocked by unfinished ${ids.design}, ${ids.schema}|blocked by unfinished ${ids.schema}, ${ids.design}`,
        ),
      );
      const claimed = await project.ok("arbeit_query", { query: "ready", params: { task_id: ids.docs } });
      assert.match(claimed.reasons[0], /claimed by alice until/);
      const yes = await project.ok("arbeit_query", { query: "ready", params: { task_id: ids.design } });
      assert.equal(yes.ready, true);
      const listing = await project.ok("arbeit_query", { query: "ready", params: { explain: true } });
      assert.ok(listing.not_ready.some((t: { id: string }) => t.id === ids.docs));
      assert.ok(listing.ready_because);
    });

    it("next returns the best ready task in full", async () => {
      await task(project, "Low", { priority: 4, description: "later" });
      const high = await task(project, "High", { priority: 0, description: "the one" });
      const next = await project.ok("arbeit_query", { query: "next" });
      assert.equal(next.task.id, high);
      assert.equal(next.task.description, "the one");
    });
  });
