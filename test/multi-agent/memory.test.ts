import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
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

for (const engine of ENGINES)
  describe(`arbeit_memory on ${engine}`, await onEngine(engine), () => {
    let project: EngineProject;
    beforeEach(async () => {
      project = await openEngineProject(engine);
    });
    afterEach(() => project.close());

    const get = async (args: Record<string, unknown>, caller = alice) =>
      (await project.ok("arbeit_memory", { action: "get", ...args }, caller)).entry;

    it("stores any JSON value under a key and upserts on the same key", async () => {
      await project.ok("arbeit_memory", { action: "set", key: "build", value: { cmd: "npm test", ok: true } }, alice);
      assert.deepEqual((await get({ key: "build" })).value, { cmd: "npm test", ok: true });
      await project.ok("arbeit_memory", { action: "set", key: "build", value: "make" }, alice);
      assert.equal((await get({ key: "build" })).value, "make");
      assert.equal((await project.ok("arbeit_memory", { action: "list" })).entries.length, 1);
    });

    it("keeps the four scopes apart", async () => {
      const t = await task(project, "T");
      await project.ok("arbeit_memory", { action: "set", key: "k", value: "project" }, alice);
      await project.ok(
        "arbeit_memory",
        { action: "set", scope: "list", scope_id: "team", key: "k", value: "list" },
        alice,
      );
      await project.ok("arbeit_memory", { action: "set", scope: "task", scope_id: t, key: "k", value: "task" }, alice);
      await project.ok("arbeit_memory", { action: "set", scope: "agent", key: "k", value: "alice" }, alice);
      await project.ok("arbeit_memory", { action: "set", scope: "agent", key: "k", value: "bob" }, bob);
      assert.equal((await get({ key: "k" })).value, "project");
      assert.equal((await get({ scope: "list", scope_id: "team", key: "k" })).value, "list");
      assert.equal((await get({ scope: "task", scope_id: t, key: "k" })).value, "task");
      assert.equal((await get({ scope: "agent", key: "k" })).value, "alice");
      assert.equal((await get({ scope: "agent", key: "k" }, bob)).value, "bob");
    });

    it("never returns an expired entry and sweeps it on the next write", async () => {
      await project.ok("arbeit_memory", { action: "set", key: "short", value: 1, ttl_seconds: 30 }, alice);
      assert.equal((await get({ key: "short" })).value, 1);
      project.clock.advance(31_000);
      assert.equal(await get({ key: "short" }), null);
      assert.deepEqual((await project.ok("arbeit_memory", { action: "list" })).entries, []);
      assert.equal((await footprint(project)).rows.memory?.length, 1);
      await project.ok("arbeit_memory", { action: "set", key: "other", value: 2 }, alice);
      assert.equal((await footprint(project)).rows.memory?.length, 1);
    });

    it("lists by prefix, treating % and _ literally", async () => {
      for (const key of ["ci.node", "ci.bun", "cix", "c%i"])
        await project.ok("arbeit_memory", { action: "set", key, value: key }, alice);
      const listed = await project.ok("arbeit_memory", { action: "list", prefix: "ci." });
      assert.deepEqual(
        listed.entries.map((e: { key: string }) => e.key),
        ["ci.bun", "ci.node"],
      );
      assert.deepEqual(
        (await project.ok("arbeit_memory", { action: "list", prefix: "c%" })).entries.map(
          (e: { key: string }) => e.key,
        ),
        ["c%i"],
      );
    });

    it("deletes by key and records set and delete as events", async () => {
      await project.ok("arbeit_memory", { action: "set", key: "gone", value: 1 }, alice);
      assert.equal((await project.ok("arbeit_memory", { action: "delete", key: "gone" }, alice)).deleted, true);
      assert.equal((await project.ok("arbeit_memory", { action: "delete", key: "gone" }, alice)).deleted, false);
      const types = (await project.rows("SELECT event_type FROM events ORDER BY seq")).map((e) => e.event_type);
      assert.deepEqual(types, ["memory_set", "memory_deleted"]);
    });

    it("explains what is missing or wrong", async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ action: "get" }, "INVALID_ARGUMENT"],
        [{ action: "set", key: "k" }, "INVALID_ARGUMENT"],
        [{ action: "set", scope: "task", key: "k", value: 1 }, "INVALID_ARGUMENT"],
        [{ action: "set", scope: "task", scope_id: "tkt-missing0", key: "k", value: 1 }, "TASK_NOT_FOUND"],
        [{ action: "set", scope: "project", scope_id: "x", key: "k", value: 1 }, "INVALID_ARGUMENT"],
        [{ action: "set", key: "k", value: "v".repeat(20_000) }, "FIELD_TOO_LARGE"],
        [{ action: "forget", key: "k" }, "INVALID_ARGUMENT"],
      ];
      for (const [args, code] of cases) {
        const result = await callAny(project, "arbeit_memory", args, alice);
        assert.equal(result.success, false, JSON.stringify(args));
        assert.equal(result.error.code, code, JSON.stringify(args));
      }
    });
  });
