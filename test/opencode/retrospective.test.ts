import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { call, pluginProject, startTask, succeed } from "./plugin-driver.js";

/**
 * OpenCode's compaction: the plugin hands the model that writes the summary, besides the task's
 * briefing, the session's retrospective once (what it decided, tried and completed, quoted), with
 * the arbeit_memory call that keeps a lesson. The summary is what the agent works from next, so
 * the offer reaches it there. Arbeit stores no memory itself.
 */

const compact = async (hooks: Parameters<typeof startTask>[0], sessionID: string) => {
  const output = { context: [] as string[] };
  await hooks["experimental.session.compacting"]!({ sessionID }, output);
  return output.context;
};

describe("the OpenCode plugin offers a session's retrospective at compaction", () => {
  const project = pluginProject();

  it("adds the quoted retrospective after the briefing once, and stores nothing", async () => {
    const { hooks } = project;
    const id = await startTask(hooks, "ses_main", "Migrate the billing tables");
    await succeed(hooks, "arbeit_context_add", { task_id: id, type: "decision", content: "Copy, then swap names" });
    await succeed(hooks, "arbeit_context_add", { task_id: id, type: "attempt", content: "ALTER in place locked" });

    const [first, ...more] = await compact(hooks, "ses_main");
    assert.deepEqual(more, []);
    assert.ok(first, "the compaction context");
    const at = first.indexOf("Carry this retrospective into the summary word for word");
    assert.ok(at > 0, `after the task's briefing:\n${first}`);
    assert.deepEqual(first.slice(at).split("\n").slice(1, -1), [
      "Arbeit: the conversation was compacted. What this session recorded before, in its own words:",
      `- decided (${id}): "Copy, then swap names"`,
      `- tried (${id}): "ALTER in place locked"`,
    ]);
    assert.match(first, /arbeit_memory \{"action": "set", "key": "<topic>", "value": "<lesson>"\}/);

    // Offered once: the next compaction of the session keeps the briefing only.
    const [again] = await compact(hooks, "ses_main");
    assert.match(again!, /^Arbeit: this session is working on:/);
    assert.equal(again!.includes("retrospective"), false, again);
    // Another session recorded nothing: no offer, and no briefing of a task it never worked on.
    assert.deepEqual(await compact(hooks, "ses_other"), []);
    const listed = await call(hooks, "arbeit_memory", { action: "list" });
    assert.deepEqual(listed.envelope.data.entries, [], "Arbeit stored no memory");
  });
});
