import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ENGINES, type EngineProject, onEngine, openEngineProject } from "./helpers.js";

/**
 * Planning sees files: two tasks that touched or plan to touch the same files are not offered as
 * parallel work to two sessions (ready, next, claim next leave one out and say why);
 * parallel_groups names the pairs of a layer that share files; a briefing names the reservations
 * that concern the session's task; start_work can reserve a task's files.
 */
const alice = { session: "ses-alice", agent: "alice" };
const bob = { session: "ses-bob", agent: "bob" };
let current: EngineProject | undefined;
const project = () => {
  if (!current) throw new Error("no project: one is opened before each test");
  return current;
};
const ok = (tool: string, args: unknown, caller: Record<string, unknown>) => project().ok(tool, args, caller);
const create = async (title: string, plan?: string) =>
  (await ok("arbeit_task_create", { title, ...(plan ? { plan } : {}) }, alice)).task.id as string;
const ids = (tasks: Array<{ id: string }>) => tasks.map((task) => task.id);

for (const engine of ENGINES)
  describe(`planning keeps tasks that share files apart on ${engine}`, await onEngine(engine), () => {
    beforeEach(async () => {
      current = await openEngineProject(engine);
    });
    afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    it("ready, next and claim next leave out a task sharing files with work another session holds, saying why", async () => {
      const auth = await create("Auth sessions", "Rework src/auth/session.ts");
      const login = await create("Login page", "Touches `src/auth/session.ts` and src/ui/login.tsx");
      const docs = await create("Docs", "docs/guide.md");
      await ok("arbeit_task_start_work", { task_id: auth }, alice);
      await project().service.trackFile({ path: "src/auth/session.ts", operation: "write" }, alice);

      const ready = await ok("arbeit_query", { query: "ready" }, bob);
      assert.deepEqual(ids(ready.tasks), [docs]);
      assert.deepEqual(ready.kept_apart, [
        { task_id: login, with_task: auth, held_by: "alice", files: ["src/auth/session.ts"] },
      ]);
      assert.equal((await ok("arbeit_query", { query: "next" }, bob)).task.id, docs);
      const claimed = await ok("arbeit_task_claim", { next: true }, bob);
      assert.equal(claimed.task.id, docs, "claim next offers no work that shares files either");

      // Alice's own work does not keep her own next task from her.
      assert.ok(ids((await ok("arbeit_query", { query: "ready" }, alice)).tasks).includes(login));
      await ok("arbeit_task_stop_work", { task_id: auth }, alice);
      assert.ok(
        ids((await ok("arbeit_query", { query: "ready" }, bob)).tasks).includes(login),
        "free once alice stops",
      );
    });

    it("a task another session holds keeps apart the tasks sharing files reserved for it", async () => {
      const api = await create("API", "Rework the handlers");
      const client = await create("Client", "Regenerate src/api/client.ts");
      await ok("arbeit_task_start_work", { task_id: api }, alice);
      await ok("arbeit_task_claim", { paths: ["src/api/**"] }, alice);
      const ready = await ok("arbeit_query", { query: "ready" }, bob);
      assert.deepEqual(ids(ready.tasks), []);
      assert.deepEqual(ready.kept_apart, [
        { task_id: client, with_task: api, held_by: "alice", files: ["src/api/client.ts"] },
      ]);
    });

    it("a reservation made for no task keeps apart the tasks whose files it covers", async () => {
      const ui = await create("UI", "Change src/ui/button.tsx");
      await ok("arbeit_task_claim", { paths: ["src/ui/**"] }, alice);
      const ready = await ok("arbeit_query", { query: "ready" }, bob);
      assert.deepEqual(ids(ready.tasks), []);
      assert.deepEqual(ready.kept_apart, [{ task_id: ui, held_by: "alice", files: ["src/ui/button.tsx"] }]);
    });

    it("parallel_groups names the pairs of a layer that share files, and the files", async () => {
      const a = await create("A", "Edit src/core.ts");
      const b = await create("B", "Also src/core.ts and lib/x.ts");
      await create("C", "Only docs/c.md");
      const groups = (await ok("arbeit_query", { query: "parallel_groups" }, bob)).groups;
      assert.equal(groups[0].kept_apart.length, 1);
      assert.deepEqual([...groups[0].kept_apart[0].tasks].sort(), [a, b].sort());
      assert.deepEqual(groups[0].kept_apart[0].files, ["src/core.ts"]);
    });

    it("a briefing names the reservations that concern the session's task", async () => {
      const task = await create("Auth", "Rework src/auth/session.ts");
      await ok("arbeit_task_claim", { paths: ["src/auth/**"], shared: true }, alice);
      await ok("arbeit_task_start_work", { task_id: task }, bob);
      await ok("arbeit_task_claim", { paths: ["src/auth/session.ts"], shared: true }, bob);
      const brief = await ok("arbeit_resume", {}, bob);
      assert.deepEqual(
        brief.reservations.map((r: any) => [r.pattern, r.agent, r.mode]),
        [
          ["src/auth/session.ts", "bob", "shared"],
          ["src/auth/**", "alice", "shared"],
        ],
      );
    });

    it("a briefing names others' reservations over the files its task wrote, and only those", async () => {
      const task = await create("Auth, no plan");
      await ok("arbeit_task_start_work", { task_id: task }, bob);
      await project().service.trackFile({ path: "src/auth/written.ts", operation: "write" }, bob);
      await ok("arbeit_task_claim", { paths: ["src/auth/*.ts"], shared: true }, alice);
      await ok("arbeit_task_claim", { paths: ["docs/**"], shared: true }, alice);
      const brief = await ok("arbeit_resume", {}, bob);
      assert.equal(brief.focus.task.id, task);
      assert.deepEqual(
        brief.reservations.map((r: any) => [r.pattern, r.agent]),
        [["src/auth/*.ts", "alice"]],
      );
    });

    it("start_work reserve: the task's planned files are reserved for it, all or nothing", async () => {
      const task = await create("Auth", "Rework src/auth/session.ts and src/auth/token.ts");
      const started = await ok("arbeit_task_start_work", { task_id: task, reserve: true }, alice);
      assert.deepEqual(
        started.reserved.map((r: any) => [r.pattern, r.mode, r.task_id]),
        [
          ["src/auth/session.ts", "exclusive", task],
          ["src/auth/token.ts", "exclusive", task],
        ],
      );
      const other = await create("Tokens", "src/auth/token.ts");
      const refused = await project().call("arbeit_task_start_work", { task_id: other, reserve: true }, bob);
      assert.equal(refused.success, false);
      assert.equal((refused as any).error.code, "FILE_RESERVED");
      const still = (await ok("arbeit_task_get", { task_id: other }, bob)).task;
      assert.equal(still.status, "open", "no work was started");
    });
  });
