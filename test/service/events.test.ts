import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ArbeitEvent } from "../../src/domain/types.js";
import type { TestProject } from "../helpers/service.js";
import {
  createTask,
  createTasks,
  events,
  getTask,
  maxSeq,
  relate,
  relateOk,
  updateTask,
  useProject,
} from "./helpers.js";

/** The audit trail: every successful mutation appends its documented event. */

const ALICE = { session: "ses-alice", agent: "alice" };

/** The task_claimed events at the head of a start_work's log, as [type, entity] pairs. */
const CLAIMED = (log: ArbeitEvent[]): Array<[string, string]> =>
  log.filter((event) => event.event_type === "task_claimed").map(() => ["task_claimed", "task"]);

/** Runs `mutate` as ALICE and returns the events it appended. */
async function eventsOf(p: TestProject, mutate: () => Promise<unknown>): Promise<ArbeitEvent[]> {
  const after = maxSeq(p);
  await mutate();
  return events(p, { after_seq: after });
}

/** Asserts the events' types and entity types, and that each carries the task and ALICE. */
function assertEvents(log: ArbeitEvent[], taskId: string, expected: Array<[string, string]>): void {
  assert.deepEqual(
    log.map((event) => [event.event_type, event.entity_type]),
    expected,
  );
  for (const event of log) {
    assert.equal(event.task_id, taskId, `${event.event_type} task_id`);
    assert.equal(event.session_id, ALICE.session, `${event.event_type} session_id`);
    assert.equal(event.agent, ALICE.agent, `${event.event_type} agent`);
    assert.ok(event.entity_id.length > 0);
    assert.equal(event.timestamp, log[0]!.timestamp);
  }
}

describe("events of each mutation", () => {
  const project = useProject();

  it("task_create appends task_created carrying the task", async () => {
    const p = project();
    let id = "";
    const log = await eventsOf(p, async () => {
      id = (await p.ok("arbeit_task_create", { title: "t" }, ALICE)).task.id;
    });
    assertEvents(log, id, [["task_created", "task"]]);
    assert.equal(log[0]!.entity_id, id);
    assert.equal((log[0]!.payload.task as { id: string }).id, id);
  });

  it("task_update appends task_updated with the changes and new version", async () => {
    const p = project();
    const task = await createTask(p, "before");
    const log = await eventsOf(p, () => p.ok("arbeit_task_update", { task_id: task.id, title: "after" }, ALICE));
    assertEvents(log, task.id, [["task_updated", "task"]]);
    assert.deepEqual(log[0]!.payload, { changes: { title: { from: "before", to: "after" } }, version: 2 });
  });

  it("task_delete appends task_deleted", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const log = await eventsOf(p, () => p.ok("arbeit_task_delete", { task_id: task.id }, ALICE));
    assertEvents(log, task.id, [["task_deleted", "task"]]);
  });

  it("context_add appends context_added, plus context_superseded when superseding", async () => {
    const p = project();
    const task = await createTask(p, "t");
    let entryId = "";
    const added = await eventsOf(p, async () => {
      entryId = (await p.ok("arbeit_context_add", { task_id: task.id, type: "note", content: "a" }, ALICE)).entry.id;
    });
    assertEvents(added, task.id, [["context_added", "context_entry"]]);
    assert.equal(added[0]!.entity_id, entryId);
    const superseded = await eventsOf(p, () =>
      p.ok("arbeit_context_add", { task_id: task.id, type: "note", content: "b", supersede_entry_id: entryId }, ALICE),
    );
    assertEvents(superseded, task.id, [
      ["context_added", "context_entry"],
      ["context_superseded", "context_entry"],
    ]);
    assert.equal(superseded[1]!.entity_id, entryId);
  });

  it("progress_add and progress_complete append progress_added and progress_completed", async () => {
    const p = project();
    const task = await createTask(p, "t");
    let ids: string[] = [];
    const added = await eventsOf(p, async () => {
      const { items } = await p.ok("arbeit_progress_add", { task_id: task.id, items: ["a", "b"] }, ALICE);
      ids = items.map((item: { id: string }) => item.id);
    });
    assertEvents(added, task.id, [["progress_added", "progress_item"]]);
    const completed = await eventsOf(p, () => p.ok("arbeit_progress_complete", { item_ids: ids }, ALICE));
    assertEvents(completed, task.id, [["progress_completed", "progress_item"]]);
    assert.deepEqual([...(completed[0]!.payload.item_ids as string[])].sort(), [...ids].sort());
  });

  it("arbeit_relationship appends relationship_added and relationship_removed on the affected task", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    const added = await eventsOf(p, () => relateOk(p, "add", b!.id, "blocked_by", a!.id, {}, ALICE));
    assertEvents(added, b!.id, [["relationship_added", "relationship"]]);
    assert.deepEqual(
      [added[0]!.payload.from_task_id, added[0]!.payload.to_task_id, added[0]!.payload.type],
      [a!.id, b!.id, "blocks"],
    );
    const removed = await eventsOf(p, () => relateOk(p, "remove", a!.id, "blocks", b!.id, {}, ALICE));
    assertEvents(removed, b!.id, [["relationship_removed", "relationship"]]);
  });

  it("start_work and stop_work append work_started and work_stopped on the session link", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const log = await eventsOf(p, () => p.ok("arbeit_task_start_work", { task_id: task.id }, ALICE));
    // Starting work also claims the task for the agent; claims have their own specs.
    const started = log.filter((event) => event.event_type !== "task_claimed");
    assertEvents(log, task.id, [...CLAIMED(log), ["work_started", "session_link"]]);
    assert.deepEqual([started[0]!.payload.status_from, started[0]!.payload.status_to], ["open", "in_progress"]);
    const stopped = await eventsOf(p, () => p.ok("arbeit_task_stop_work", { task_id: task.id }, ALICE));
    // Stopping also hands the claim back (claim_released on the task).
    assertEvents(stopped, task.id, [
      ["work_stopped", "session_link"],
      ["claim_released", "task"],
    ]);
    assert.equal(stopped[0]!.entity_id, started[0]!.entity_id);
  });

  it("file tracking appends file_tracked", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await p.ok("arbeit_task_start_work", { task_id: task.id }, ALICE);
    const log = await eventsOf(p, () =>
      p.service.trackFile({ path: "src/a.ts", operation: "read" }, { ...p.caller, ...ALICE }),
    );
    assertEvents(log, task.id, [["file_tracked", "file_association"]]);
    assert.deepEqual(log[0]!.payload, { file_path: "src/a.ts", operation: "read" });
  });
});

describe("calls that change nothing", () => {
  const project = useProject();

  it("a no-op update writes no event and keeps the version", async () => {
    const p = project();
    const parent = await createTask(p, "parent");
    const blocker = await createTask(p, "blocker");
    const task = await createTask(p, "t", { type: "bug", intent: "i", parent_id: parent.id, blocked_by: [blocker.id] });
    const log = await eventsOf(p, () =>
      updateTask(p, task.id, {
        title: "t",
        type: "bug",
        intent: "i",
        parent_id: parent.id,
        blocked_by: [blocker.id],
        priority: 2,
      }),
    );
    assert.deepEqual(log, []);
    const after = await getTask(p, task.id);
    assert.equal(after.version, task.version);
    assert.equal(after.updated_at, task.updated_at);
  });

  it("an update with only a task_id writes nothing", async () => {
    const p = project();
    const task = await createTask(p, "t");
    assert.deepEqual(await eventsOf(p, () => updateTask(p, task.id, {})), []);
  });

  it("reads write no events", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const log = await eventsOf(p, async () => {
      await p.ok("arbeit_task_get", { task_id: task.id, include: ["context", "recent_events"] });
      await p.ok("arbeit_query", { query: "tasks" });
      await p.ok("arbeit_query", { query: "events" });
    });
    assert.deepEqual(log, []);
  });

  it("removing a relationship that does not exist writes nothing", async () => {
    const p = project();
    const [a, b] = await createTasks(p, "a", "b");
    assert.deepEqual(await eventsOf(p, () => relate(p, "remove", a!.id, "blocks", b!.id)), []);
  });

  it("stop_work on a task not being worked on writes nothing", async () => {
    const p = project();
    const task = await createTask(p, "t");
    assert.deepEqual(await eventsOf(p, () => p.ok("arbeit_task_stop_work", { task_id: task.id })), []);
  });
});
