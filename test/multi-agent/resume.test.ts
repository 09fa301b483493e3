import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { tokenizer } from "../helpers/tokenizer.js";
import { alice, bob, ENGINES, type EngineProject, onEngine, openEngineProject, task } from "./helpers.js";

for (const engine of ENGINES)
  describe(`arbeit_resume on ${engine}`, await onEngine(engine), () => {
    let project: EngineProject;
    beforeEach(async () => {
      project = await openEngineProject(engine);
    });
    afterEach(() => project.close());

    it("with nothing to do, says so", async () => {
      const packet = await project.ok("arbeit_resume", {}, alice);
      assert.equal(packet.focus.task, null);
      assert.equal(packet.focus.reason, "none");
    });

    it("offers the best ready task when the agent has nothing of its own", async () => {
      await task(project, "Later", { priority: 3 });
      const best = await task(project, "Now", { priority: 0 });
      const packet = await project.ok("arbeit_resume", {}, alice);
      assert.equal(packet.focus.task.id, best);
      assert.equal(packet.focus.reason, "best_ready");
    });

    it("prefers the session's claim over ready work, then the task it last started", async () => {
      await task(project, "Ready", { priority: 0 });
      const claimed = await task(project, "Claimed", { priority: 4 });
      await project.ok("arbeit_task_claim", { task_id: claimed }, alice);
      assert.equal((await project.ok("arbeit_resume", {}, alice)).focus.reason, "claimed");
      await project.ok("arbeit_task_start_work", { task_id: claimed }, alice);
      await project.ok("arbeit_task_stop_work", { task_id: claimed }, alice);
      const kept = await project.ok("arbeit_resume", {}, alice);
      assert.equal(kept.focus.task.id, claimed);
      assert.equal(kept.focus.reason, "last_started");
    });

    it("brings the focus task's parent, blockers, context, progress, files and memory", async () => {
      const epic = await task(project, "Epic");
      const blocker = await task(project, "Blocker");
      const focus = await task(project, "Focus", { parent_id: epic, blocked_by: [blocker], priority: 0 });
      await project.ok("arbeit_task_start_work", { task_id: focus }, alice);
      await project.ok("arbeit_context_add", { task_id: focus, type: "decision", content: "Use SQLite" }, alice);
      await project.ok("arbeit_progress_add", { task_id: focus, items: ["one", "two"] }, alice);
      await project.service.trackFile({ path: `${project.dir}/src/a.ts`, operation: "write" }, alice);
      await project.ok(
        "arbeit_memory",
        { action: "set", scope: "task", scope_id: focus, key: "port", value: 8080 },
        alice,
      );
      await project.ok("arbeit_memory", { action: "set", scope: "agent", key: "style", value: "terse" }, alice);
      await project.ok("arbeit_memory", { action: "set", scope: "agent", key: "style", value: "chatty" }, bob);
      const packet = await project.ok("arbeit_resume", { max_tokens: 5000 }, alice);
      assert.equal(packet.focus.task.id, focus);
      assert.equal(packet.parent.id, epic);
      assert.deepEqual(
        packet.blockers.map((t: { id: string }) => t.id),
        [blocker],
      );
      assert.deepEqual(
        packet.context.map((c: { content: string }) => c.content),
        ["Use SQLite"],
      );
      assert.equal(packet.progress.total, 2);
      assert.deepEqual(
        packet.files.map((f: { file_path: string }) => f.file_path),
        ["src/a.ts"],
      );
      const memory = packet.memory.map((m: { key: string; value: unknown }) => `${m.key}=${m.value}`).sort();
      assert.deepEqual(memory, ["port=8080", "style=terse"]);
    });

    it("shows what changed since the agent's cursor, including other agents' changes, once", async () => {
      const id = await task(project, "Shared");
      await project.ok("arbeit_task_claim", { task_id: id }, alice);
      const first = await project.ok("arbeit_resume", {}, alice);
      assert.ok(first.events.total >= 2);
      await project.ok("arbeit_context_add", { task_id: id, type: "note", content: "bob was here" }, bob);
      const second = await project.ok("arbeit_resume", {}, alice);
      assert.equal(second.events.total, 1);
      assert.equal(second.events.by_other_agents, 1);
      assert.equal(second.events.shown[0].agent, "bob");
      assert.equal(second.events.shown[0].event_type, "context_added");
      assert.equal((await project.ok("arbeit_resume", {}, alice)).events.total, 0);
    });

    it("keeps a cursor per agent", async () => {
      const id = await task(project, "Shared", { priority: 0 });
      await project.ok("arbeit_resume", {}, alice);
      await project.ok("arbeit_context_add", { task_id: id, type: "note", content: "x" }, alice);
      assert.equal((await project.ok("arbeit_resume", {}, alice)).events.total, 1);
      // Bob has never looked: he sees the creation too.
      assert.equal((await project.ok("arbeit_resume", {}, bob)).events.total, 2);
    });

    it("peek reads without moving the cursor or the focus", async () => {
      const id = await task(project, "Work");
      await project.ok("arbeit_task_claim", { task_id: id }, alice);
      const peeked = await project.ok("arbeit_resume", { peek: true }, alice);
      assert.equal(peeked.cursor.advanced, false);
      const again = await project.ok("arbeit_resume", { peek: true }, alice);
      assert.equal(again.events.total, peeked.events.total);
      const real = await project.ok("arbeit_resume", {}, alice);
      assert.equal(real.events.total, peeked.events.total);
      assert.equal((await project.ok("arbeit_resume", { peek: true }, alice)).events.total, 0);
    });

    it("fits the budget measured by a real tokenizer, cutting superseded context and old events first", async () => {
      const id = await task(project, "Big", { description: "d".repeat(3000), plan: "p ".repeat(1500) });
      await project.ok("arbeit_task_start_work", { task_id: id }, alice);
      let previous: string | undefined;
      for (let i = 0; i < 12; i++) {
        const args: Record<string, unknown> = {
          task_id: id,
          type: "decision",
          content: `Decision ${i}: ${"because ".repeat(40)}`,
        };
        if (previous) args.supersede_entry_id = previous;
        previous = (await project.ok("arbeit_context_add", args, bob)).entry.id;
      }
      for (let i = 0; i < 30; i++)
        await project.ok(
          "arbeit_context_add",
          { task_id: id, type: "note", content: `note ${i} ${"x".repeat(200)}` },
          bob,
        );
      for (const maxTokens of [1500, 600]) {
        const packet = await project.ok("arbeit_resume", { peek: true, max_tokens: maxTokens }, alice);
        const tokens = tokenizer().encode(JSON.stringify(packet)).length;
        assert.ok(tokens <= maxTokens, `${tokens} tokens > ${maxTokens}`);
        assert.match(packet.budget.cut[0], /superseded context/);
        assert.ok(packet.budget.cut.some((cut: string) => /oldest events/.test(cut)));
        assert.equal(packet.focus.task.id, id);
      }
    });

    it("the default budget is 1,500 tokens", async () => {
      await task(project, "Any");
      assert.equal((await project.ok("arbeit_resume", { peek: true }, alice)).budget.max_tokens, 1500);
    });
  });
