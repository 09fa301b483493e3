import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { TOOLS } from "../../src/tools/catalogue.js";
import { invokeTool } from "../../src/tools/envelope.js";
import {
  alice,
  bob,
  callAny,
  ENGINES,
  type EngineProject,
  footprint,
  onEngine,
  openEngineProject,
  task,
} from "./helpers.js";
import { HARMLESS_TWICE, REPLAYS } from "./replays.js";

describe("request_id", () => {
  it("is offered by every mutating tool and by no read-only one", () => {
    for (const tool of TOOLS) {
      const has = "request_id" in tool.input.shape;
      const mutating = !tool.annotations.readOnlyHint && tool.name !== "arbeit_init";
      assert.equal(has, mutating, tool.name);
    }
  });
});

for (const engine of ENGINES)
  describe(`request_id makes every mutating tool safe to retry on ${engine}`, await onEngine(engine), () => {
    let project: EngineProject;
    before(async () => {
      project = await openEngineProject(engine);
    });
    after(() => project.close());

    it("replays the first response byte for byte and writes nothing on a repeat", async () => {
      const first = await callAny(project, "arbeit_task_create", { title: "Once only", request_id: "create-1" }, alice);
      const before = await footprint(project);
      const again = await callAny(project, "arbeit_task_create", { title: "Once only", request_id: "create-1" }, alice);
      assert.equal(JSON.stringify(again), JSON.stringify(first));
      assert.deepEqual(await footprint(project), before);
    });

    it("refuses a request_id reused for a different call", async () => {
      await project.ok("arbeit_task_create", { title: "First", request_id: "reused" }, alice);
      const other = await callAny(project, "arbeit_task_create", { title: "Second", request_id: "reused" }, alice);
      assert.equal(other.success, false);
      assert.equal(other.error.code, "INVALID_ARGUMENT");
      assert.match(other.error.message, /already used/);
    });

    it("keeps each agent's request ids apart", async () => {
      const mine = await project.ok("arbeit_task_create", { title: "Mine", request_id: "same-id" }, alice);
      const theirs = await project.ok("arbeit_task_create", { title: "Mine", request_id: "same-id" }, bob);
      assert.notEqual(mine.task.id, theirs.task.id);
    });

    it("keeps request ids apart per session, even of one agent, and per list", async () => {
      const one = { agent: "claude-code", session: "conversation-1" };
      const two = { agent: "claude-code", session: "conversation-2" };
      const args = { title: "Same words", request_id: "step-1" };
      const first = await project.ok("arbeit_task_create", args, one);
      const second = await project.ok("arbeit_task_create", args, two);
      assert.notEqual(second.task.id, first.task.id, "another session's id is not a replay");
      const inList = await project.ok("arbeit_task_create", args, { ...one, list_id: "ops" });
      assert.notEqual(inList.task.id, first.task.id, "the same session in another list is not a replay");
      assert.equal((await project.ok("arbeit_task_create", args, one)).task.id, first.task.id);
    });

    it("lets a failed call be retried: failures are not remembered", async () => {
      const failed = await callAny(
        project,
        "arbeit_task_create",
        { title: "Child", parent_id: "tkt-missing0", request_id: "retry-me" },
        alice,
      );
      assert.equal(failed.error.code, "PARENT_NOT_FOUND");
      const parent = await task(project, "Parent");
      const fixed = await callAny(
        project,
        "arbeit_task_update",
        { task_id: parent, title: "Parent!", request_id: "retry-me" },
        alice,
      );
      assert.equal(fixed.success, true);
    });

    it("survives a restart: the replay comes from the database", async () => {
      const first = await callAny(project, "arbeit_task_create", { title: "Durable", request_id: "restart-1" }, alice);
      const store = await project.reopen();
      const service = new ArbeitService(store, { projectRoot: project.dir, now: project.clock.now });
      const tool = TOOLS.find((t) => t.name === "arbeit_task_create")!;
      const again = await invokeTool(
        tool,
        { title: "Durable", request_id: "restart-1" },
        { caller: alice, cwd: project.dir, service: async () => service },
      );
      assert.equal(JSON.stringify(again), JSON.stringify(first));
      await store.close();
    });
  });

describe("a retried write does not run again", () => {
  it("covers every tool that takes a request_id", () => {
    const covered = new Set(Object.values(REPLAYS).map((c) => c.tool));
    const offered = TOOLS.filter((t) => "request_id" in t.input.shape).map((t) => t.name);
    assert.deepEqual(
      offered.filter((name) => !covered.has(name)),
      HARMLESS_TWICE,
    );
  });
});

for (const engine of ENGINES)
  describe(`a retried write does not run again on ${engine}`, await onEngine(engine), () => {
    for (const [what, c] of Object.entries(REPLAYS)) {
      it(`replays ${what} (${c.tool}) without touching a row`, async () => {
        const project = await openEngineProject(engine);
        try {
          const args = await c.setup(project);
          const first = await callAny(project, c.tool, { ...args, request_id: "retry" }, alice);
          assert.equal(first.success, true, JSON.stringify(first));
          await c.meanwhile?.(project, args);
          project.clock.advance(60_000);
          const before = await footprint(project);
          const again = await callAny(project, c.tool, { ...args, request_id: "retry" }, alice);
          assert.equal(JSON.stringify(again), JSON.stringify(first));
          assert.deepEqual(await footprint(project), before);
          // The case is one a second run would betray: running it again for real fails or writes.
          const rerun = await callAny(project, c.tool, args, alice);
          assert.ok(
            !rerun.success || !isDeepStrictEqual(await footprint(project), before),
            `a second run of ${c.tool} here would leave no trace, so this case proves nothing`,
          );
        } finally {
          await project.close();
        }
      });
    }
  });
