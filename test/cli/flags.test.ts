import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertToolError, type CliProject, cliProject } from "./support.js";

/**
 * Friendly subcommands take their flags from each tool's schema: snake_case keys become
 * --kebab-case flags, some arguments may be bare words, and values are converted by type.
 */
describe("friendly subcommand flags", () => {
  let project: CliProject;
  let epic: string;
  before(async () => {
    project = await cliProject();
    epic = (await project.ok(["task", "create", "Flags epic", "--type", "epic"])).task.id;
  });
  after(() => project.cleanup());

  it("accepts --flag value, --flag=value and the snake_case key", async () => {
    const a = await project.ok(["task", "create", "--title=Equals form", "--parent-id", epic, "--priority=0"]);
    assert.equal(a.task.title, "Equals form");
    assert.equal(a.task.parent_id, epic);
    assert.equal(a.task.priority, 0);
    const b = await project.ok(["task", "create", "Snake key", "--parent_id", epic]);
    assert.equal(b.task.parent_id, epic);
  });

  it("splits id lists on commas and also takes repeats", async () => {
    const one = (await project.ok(["task", "create", "One"])).task.id;
    const two = (await project.ok(["task", "create", "Two"])).task.id;
    const three = (await project.ok(["task", "create", "Three"])).task.id;
    const blocked = await project.ok([
      "task",
      "create",
      "Blocked",
      "--blocked-by",
      `${one},${two}`,
      "--blocked-by",
      three,
    ]);
    assert.deepEqual([...blocked.task.blocked_by].sort(), [one, two, three].sort());
    const cleared = await project.ok(["task", "update", blocked.task.id, "--blocked-by", ""]);
    assert.deepEqual(cleared.task.blocked_by, []);
  });

  it("keeps commas inside free text: one progress item per --items flag", async () => {
    const { task } = await project.ok(["task", "create", "Progress flags"]);
    const { items } = await project.ok([
      "progress",
      "add",
      task.id,
      "--items",
      "Parse the header, then the body",
      "--items",
      "Add tests",
    ]);
    assert.deepEqual(
      items.map((item: { content: string }) => item.content),
      ["Parse the header, then the body", "Add tests"],
    );
  });

  it("takes a boolean flag without a value", async () => {
    const { task } = await project.ok(["task", "create", "Done already"]);
    const { items } = await project.ok(["progress", "add", task.id, "Already done", "--completed"]);
    assert.equal(items[0].completed, true);
  });

  it('turns "null" into null where the schema allows it: --parent-id null detaches', async () => {
    const { task } = await project.ok(["task", "create", "Detach me", "--parent-id", epic]);
    const updated = await project.ok(["task", "update", task.id, "--parent-id", "null"]);
    assert.equal(updated.task.parent_id, null);
  });

  it("parses JSON flags", async () => {
    const { task } = await project.ok(["task", "create", "Metadata"]);
    const { entry } = await project.ok([
      "context",
      "add",
      task.id,
      "reference",
      "RFC 6749",
      "--metadata",
      '{"url": "https://www.rfc-editor.org/rfc/rfc6749"}',
    ]);
    assert.deepEqual(entry.metadata, { url: "https://www.rfc-editor.org/rfc/rfc6749" });
  });

  it("sets task metadata as JSON, merges it on update (null removes a key) and filters `query tasks` by it", async () => {
    const { task } = await project.ok(["task", "create", "Card payments", "--metadata", '{"jira":"PAY-3","points":3}']);
    assert.deepEqual(task.metadata, { jira: "PAY-3", points: 3 });
    const updated = await project.ok([
      "task",
      "update",
      task.id,
      "--metadata",
      '{"points":5,"jira":null,"team":"web"}',
    ]);
    assert.deepEqual(updated.task.metadata, { points: 5, team: "web" });
    const { tasks } = await project.ok(["query", "tasks", "--metadata", '{"team":"web","points":5}']);
    assert.deepEqual(
      tasks.map((t: { id: string }) => t.id),
      [task.id],
    );
    assert.deepEqual((await project.ok(["query", "tasks", "--metadata", '{"team":"ops"}'])).tasks, []);
    assertToolError(
      await project.run(["task", "update", task.id, "--metadata", '["not", "an object"]']),
      "INVALID_METADATA",
    );
  });

  it("filters `query tasks`, `query ready` and `query next` by a label kept in a metadata list", async () => {
    const { task } = await project.ok(["task", "create", "Label me", "--metadata", '{"labels":["cli-ui","bug"]}']);
    for (const query of ["tasks", "ready"]) {
      const { tasks } = await project.ok(["query", query, "--metadata", '{"labels":"cli-ui"}']);
      assert.deepEqual(
        tasks.map((t: { id: string }) => t.id),
        [task.id],
        query,
      );
    }
    assert.equal((await project.ok(["query", "next", "--metadata", '{"labels":"bug"}'])).task.id, task.id);
  });

  it("passes words that start with a dash after --", async () => {
    const { task } = await project.ok(["task", "create", "--", "--verbose flag is ignored"]);
    assert.equal(task.title, "--verbose flag is ignored");
  });

  it("takes relationship words in reading order, inverse names included", async () => {
    const a = (await project.ok(["task", "create", "Schema"])).task.id;
    const b = (await project.ok(["task", "create", "API"])).task.id;
    const { relationship } = await project.ok(["relationship", "add", b, "blocked_by", a]);
    assert.deepEqual([relationship.from_task_id, relationship.type, relationship.to_task_id], [a, "blocks", b]);
    const { tasks } = await project.ok(["query", "blocked_tasks"]);
    assert.ok(tasks.some((task: { id: string }) => task.id === b));
    const removed = await project.ok(["relationship", "remove", a, "blocks", b]);
    assert.equal(removed.removed, true);
  });

  it("gives query params as flags, with lists of statuses and null for roots", async () => {
    const { task } = await project.ok(["task", "create", "Child in progress", "--parent-id", epic]);
    await project.ok(["task", "start", task.id]);
    const open = await project.ok(["query", "tasks", "--status", "open,in_progress", "--parent-id", epic]);
    assert.ok(open.tasks.some((t: { id: string }) => t.id === task.id));
    const roots = await project.ok(["query", "tasks", "--parent-id", "null", "--limit", "100"]);
    assert.ok(
      roots.tasks.every((t: { parent_id?: string }) => t.parent_id === undefined),
      "roots have no parent",
    );
    assert.ok(roots.tasks.some((t: { id: string }) => t.id === epic));
    const events = await project.ok(["query", "events", "--event-types", "work_started", "--task-id", task.id]);
    assert.deepEqual(
      events.events.map((e: { event_type: string }) => e.event_type),
      ["work_started"],
    );
  });
});
