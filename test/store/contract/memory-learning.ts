import assert from "node:assert/strict";
import { it } from "node:test";
import { alice, bob, type StoreFactory, suite, useStore } from "./harness.js";

/**
 * Memory that learns: entries that say the same thing are found and merged on request, the
 * briefing shows the memory that concerns the focus task first, and a session is offered a
 * retrospective of what it recorded, which Arbeit never stores itself.
 */
export function memoryLearningContract(factory: StoreFactory): void {
  suite("memory that learns", () => {
    const p = useStore(factory);
    const set = (key: string, value: unknown, extra: Record<string, unknown> = {}, caller = alice) =>
      p().ok("arbeit_memory", { action: "set", key, value, ...extra }, caller);
    const keys = (entries: Array<{ key: string }>) => entries.map((entry) => entry.key);

    it("similar lists the pairs of a scope's entries whose words overlap by half or more, most alike first", async () => {
      await set("build-cmd", "Run npm test before each commit");
      await set("build-command", "run NPM test before each commit, please");
      await set("commit-rule", "npm test before each commit");
      await set("style", "Answer tersely");
      // The same words in another scope are not a duplicate of this one's.
      await set("build-cmd", "Run npm test before each commit", { scope: "agent" });
      const { pairs } = await p().ok("arbeit_memory", { action: "similar" });
      assert.deepEqual(pairs, [
        // {build, cmd, run, npm, test, before, each, commit} against {build, command, ..., please}: 7 of 10.
        { keys: ["build-cmd", "build-command"], score: 0.7 },
        { keys: ["build-cmd", "commit-rule"], score: 0.56 },
        { keys: ["build-command", "commit-rule"], score: 0.5 },
      ]);
      const ofOne = await p().ok("arbeit_memory", { action: "similar", key: "commit-rule", limit: 1 });
      assert.deepEqual(ofOne.pairs, [{ keys: ["build-cmd", "commit-rule"], score: 0.56 }]);
      assert.deepEqual((await p().ok("arbeit_memory", { action: "similar", key: "style" })).pairs, []);
      assert.deepEqual((await p().ok("arbeit_memory", { action: "similar", scope: "agent" })).pairs, []);
    });

    it("merge keeps one entry with every reinforcement, deletes the others, and records both", async () => {
      await set("test-cmd", "npm test");
      p().clock.advance(1000);
      await set("test-cmd", "npm test");
      await set("tests", "run npm test", { ttl_seconds: 3600 });
      await set("testing", "npm test, always", { ttl_seconds: 60 });
      p().clock.advance(1000);
      const seq = await p().lastSeq();
      const merged = await p().ok("arbeit_memory", {
        action: "merge",
        keys: ["tests", "test-cmd", "testing"],
        key: "test-cmd",
        value: "Run npm test before every commit",
      });
      assert.deepEqual(merged.merged, ["tests", "testing"]);
      assert.deepEqual(
        [merged.entry.key, merged.entry.value, merged.entry.reinforced, merged.entry.expires_at],
        ["test-cmd", "Run npm test before every commit", 4, null],
      );
      assert.equal(merged.entry.created_at, "2026-01-01T00:00:00.000Z", "first set when the earliest was");
      assert.equal(merged.entry.updated_at, "2026-01-01T00:00:02.000Z");
      assert.deepEqual(keys((await p().ok("arbeit_memory", { action: "list" })).entries), ["test-cmd"]);
      const events = await p().read((tx) => tx.listEvents({ after_seq: seq, limit: 10 }));
      assert.deepEqual(
        events.map((e) => [e.event_type, e.payload.key, e.payload.reason ?? e.payload.merged]),
        [
          ["memory_deleted", "tests", "merged"],
          ["memory_deleted", "testing", "merged"],
          ["memory_set", "test-cmd", ["tests", "testing"]],
        ],
      );
    });

    it("merge into a new key takes the first entry's value and the latest expiry; refuses unknown keys whole", async () => {
      await set("a", "deploy with fly", { ttl_seconds: 60 });
      await set("b", "deploys go through fly", { ttl_seconds: 600 });
      const seq = await p().lastSeq();
      const missing = await p().fail("arbeit_memory", { action: "merge", keys: ["a", "nope", "b", "gone"] });
      assert.equal(missing.code, "MEMORY_NOT_FOUND");
      assert.deepEqual(missing.details.keys, ["nope", "gone"]);
      assert.equal(await p().lastSeq(), seq, "nothing was written");
      assert.deepEqual(keys((await p().ok("arbeit_memory", { action: "list" })).entries), ["a", "b"]);
      const one = await p().fail("arbeit_memory", { action: "merge", keys: ["a", "a"] });
      assert.equal(one.code, "INVALID_ARGUMENT");
      const noTask = await p().fail("arbeit_memory", {
        action: "merge",
        keys: ["a", "b"],
        scope: "task",
        scope_id: "tkt-zzzzzzzz",
      });
      assert.equal(noTask.code, "TASK_NOT_FOUND");
      const merged = await p().ok("arbeit_memory", { action: "merge", keys: ["a", "b"], key: "deploy" });
      assert.deepEqual(
        [merged.entry.key, merged.entry.value, merged.entry.reinforced, merged.entry.expires_at],
        ["deploy", "deploy with fly", 2, "2026-01-01T00:10:00.000Z"],
      );
      assert.deepEqual(keys((await p().ok("arbeit_memory", { action: "list" })).entries), ["deploy"]);
    });

    it("briefs the memory that shares the most words with the focus task first, then the strongest", async () => {
      for (let i = 0; i < 3; i++) await set("deploy", "deploy with fly");
      p().clock.advance(1000);
      await set("style", "answer tersely", { scope: "agent" });
      p().clock.advance(1000);
      await set("session-quirk", "the login form trims the email before validation");
      p().clock.advance(1000);
      await set("auth-files", "auth code lives under src/auth");
      const order = async () => keys((await p().ok("arbeit_resume", { peek: true }, alice)).memory);
      assert.deepEqual(await order(), ["deploy", "auth-files", "session-quirk", "style"], "no focus: strongest first");
      const task = await p().task("Fix login form validation", { description: "Emails with spaces fail" });
      await p().ok("arbeit_task_start_work", { task_id: task }, alice);
      await p().service.trackFile({ path: `${p().root}/src/auth/login.ts`, operation: "write" }, alice);
      // session-quirk shares login, form, validation; auth-files shares src, auth; the rest nothing.
      assert.deepEqual(await order(), ["session-quirk", "auth-files", "deploy", "style"]);
    });

    it("offers a session's retrospective once per trigger, quoting its own records, and stores no memory", async () => {
      const task = await p().task("Ship the importer");
      await p().ok("arbeit_task_start_work", { task_id: task }, alice);
      const add = (type: string, content: string, extra: Record<string, unknown> = {}, caller = alice) =>
        p().ok("arbeit_context_add", { task_id: task, type, content, ...extra }, caller);
      await add("decision", "Stream the file instead of loading it whole");
      await add("attempt", "Parsing with a regex failed on quoted commas");
      await add("note", "Lunch at noon");
      const blocker = (await add("blocker", "Which encoding do exports use?")).entry.id;
      await add(
        "user_input",
        "Always UTF-8",
        { supersede_entry_id: blocker },
        { session: "ses-human", agent: "human:ann" },
      );
      // Another session's records are not this one's retrospective.
      await add("decision", "Bob's own decision", {}, bob);
      await p().ok("arbeit_task_update", { task_id: task, status: "completed" }, alice);
      const offer = async (trigger: "compaction" | "session_end", caller = alice) =>
        (await p().service.offerRetrospective(trigger, caller)).data.text;
      const text = await offer("compaction");
      assert.ok(text);
      const lines = text.split("\n");
      assert.match(lines[0]!, /compacted/);
      assert.deepEqual(lines.slice(1, -1), [
        `- decided (${task}): "Stream the file instead of loading it whole"`,
        `- tried (${task}): "Parsing with a regex failed on quoted commas"`,
        `- was blocked (${task}): "Which encoding do exports use?"; answered: "Always UTF-8"`,
        `- completed ${task} "Ship the importer"`,
      ]);
      assert.match(lines.at(-1)!, /arbeit_memory \{"action": "set", "key": "<topic>", "value": "<lesson>"\}/);
      assert.equal(await offer("compaction"), null, "offered once");
      assert.match((await offer("session_end"))!, /last run ended/);
      assert.equal(await offer("session_end"), null);
      const offered = await p().read((tx) =>
        tx.listEvents({ after_seq: 0, event_types: ["retrospective_offered"], limit: 10 }),
      );
      assert.deepEqual(
        offered.map((e) => [e.session_id, e.payload.trigger, e.payload.items]),
        [
          ["ses-alice", "compaction", 4],
          ["ses-alice", "session_end", 4],
        ],
      );
      assert.deepEqual((await p().ok("arbeit_memory", { action: "list" })).entries, [], "Arbeit wrote no memory");
      assert.deepEqual((await p().ok("arbeit_memory", { action: "list", scope: "agent" })).entries, []);
    });

    it("offers nothing to a session that recorded nothing worth it, and marks nothing", async () => {
      const task = await p().task("Quiet work");
      await p().ok("arbeit_task_start_work", { task_id: task }, alice);
      await p().ok("arbeit_context_add", { task_id: task, type: "note", content: "a note" }, alice);
      const seq = await p().lastSeq();
      assert.equal((await p().service.offerRetrospective("compaction", alice)).data.text, null);
      assert.equal(await p().lastSeq(), seq);
    });

    it("keeps a long session's retrospective within its budget, newest records first", async () => {
      const task = await p().task("Long work");
      await p().ok("arbeit_task_start_work", { task_id: task }, alice);
      for (let i = 0; i < 40; i++)
        await p().ok("arbeit_context_add", {
          task_id: task,
          type: "decision",
          content: `Decision ${i} ${"x".repeat(200)}`,
        });
      const text = (await p().service.offerRetrospective("compaction", alice)).data.text!;
      assert.ok(JSON.stringify(text).length / 3 <= 600, `${JSON.stringify(text).length / 3} tokens`);
      assert.match(text, /Decision 39 /);
      assert.doesNotMatch(text, /Decision 0 /);
    });
  });
}
