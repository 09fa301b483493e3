import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertSuccess, type CliProject, cliProject } from "../cli/support.js";
import { openTestProject, type TestProject } from "../helpers/service.js";
import { HOSTILE } from "./hostile.js";

/**
 * Text is stored and returned exactly as given — any Unicode, quotes, SQL and shell
 * metacharacters, control characters — through the catalogue and through the real CLI. NUL
 * bytes and lone surrogates (which SQLite's UTF-8 cannot hold) are refused with a clear message.
 */
let project: TestProject;
before(async () => {
  project = await openTestProject();
});
after(() => project.close());

describe("hostile strings round-trip verbatim through the catalogue", () => {
  for (const value of HOSTILE) {
    it(JSON.stringify(value).slice(0, 60), async () => {
      const { task } = await project.ok("arbeit_task_create", {
        title: value,
        intent: value,
        description: value,
        plan: value,
        active_form: value,
      });
      // owner is a name, not text: names refuse control characters (test/limits/names.test.ts).
      for (const field of ["title", "intent", "description", "plan", "active_form"])
        assert.equal(task[field], value, field);
      await project.ok("arbeit_context_add", {
        task_id: task.id,
        type: "note",
        content: value,
        metadata: { [value]: value, nested: [value] },
      });
      await project.ok("arbeit_progress_add", { task_id: task.id, items: [value] });
      const other = (await project.ok("arbeit_task_create", { title: "other" })).task.id;
      await project.ok("arbeit_relationship", {
        action: "add",
        type: "relates_to",
        from_task_id: task.id,
        to_task_id: other,
        metadata: { why: value },
      });
      await project.ok("arbeit_memory", { action: "set", key: value, value: { text: value } });

      const got = await project.ok("arbeit_task_get", {
        task_id: task.id,
        include: ["context", "progress", "relationships"],
      });
      assert.equal(got.task.title, value);
      assert.equal(got.task.description, value);
      assert.equal(got.context[0].content, value);
      assert.deepEqual(got.context[0].metadata, { [value]: value, nested: [value] });
      assert.equal(got.progress[0].content, value);
      assert.deepEqual(got.relationships[0].metadata, { why: value });
      const memory = await project.ok("arbeit_memory", { action: "get", key: value });
      assert.deepEqual(memory.entry.value, { text: value });
    });
  }

  it("the tables survive every injection attempt", () => {
    const tables = project.store.driver.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    assert.ok(tables.some((t: any) => t.name === "tasks"));
    assert.ok(tables.some((t: any) => t.name === "events"));
  });

  it("JSON values (metadata, memory) keep even lone surrogates, since JSON escapes them", async () => {
    const { task } = await project.ok("arbeit_task_create", { title: "json" });
    await project.ok("arbeit_context_add", {
      task_id: task.id,
      type: "note",
      content: "c",
      metadata: { s: "\ud800x" },
    });
    await project.ok("arbeit_memory", { action: "set", key: "lone", value: "\udfff" });
    const got = await project.ok("arbeit_task_get", { task_id: task.id, include: ["context"] });
    assert.equal(got.context[0].metadata.s, "\ud800x");
    assert.equal((await project.ok("arbeit_memory", { action: "get", key: "lone" })).entry.value, "\udfff");
  });
});

describe("NUL bytes and lone surrogates are refused clearly", () => {
  const FIELDS: Array<[string, (bad: string, task: string) => [string, Record<string, unknown>], RegExp?]> = [
    ["title", (bad) => ["arbeit_task_create", { title: bad }]],
    ["description", (bad) => ["arbeit_task_create", { title: "t", description: bad }]],
    ["plan", (bad, task) => ["arbeit_task_update", { task_id: task, plan: bad }]],
    ["content", (bad, task) => ["arbeit_context_add", { task_id: task, type: "note", content: bad }]],
    ["items.0", (bad, task) => ["arbeit_progress_add", { task_id: task, items: [bad] }]],
    ["key", (bad) => ["arbeit_memory", { action: "set", key: bad, value: 1 }]],
    ["request_id", (bad) => ["arbeit_task_create", { title: "t", request_id: bad }]],
    // A session is a name, which refuses every control character, NUL among them.
    ["session", (bad, task) => ["arbeit_task_start_work", { task_id: task, session: bad }], /control characters/],
    ["params.file_path", (bad) => ["arbeit_query", { query: "tasks_for_file", params: { file_path: bad } }]],
  ];
  for (const [field, build, nul = /must not contain NUL bytes/] of FIELDS) {
    it(`${field}: NUL is INVALID_ARGUMENT "must not contain NUL bytes"; a lone surrogate is refused too`, async () => {
      const task = (await project.ok("arbeit_task_create", { title: "host" })).task.id;
      const events = () => (project.store.driver.prepare("SELECT COUNT(*) AS n FROM events").get() as any).n;
      const before = events();
      for (const [bad, pattern] of [
        ["before\u0000after", nul],
        ["\u0000", nul],
        ["half \ud83d pair", /must be valid Unicode/],
        ["\udc00 trailing half", /must be valid Unicode/],
      ] as const) {
        const [tool, args] = build(bad, task);
        const result = await project.call(tool, args);
        assert.equal(result.success, false, `${JSON.stringify(bad)} accepted in ${field}`);
        if (result.success) continue;
        assert.equal(result.error.code, "INVALID_ARGUMENT");
        assert.match(result.error.message, new RegExp(`${field.replace(".", "\\.")}: `));
        assert.match(result.error.message, pattern);
      }
      assert.equal(events(), before);
    });
  }
});

describe("hostile strings through the real CLI", () => {
  let cli: CliProject;
  before(async () => {
    cli = await cliProject();
  });
  after(() => cli.cleanup());

  it("arbeit call (JSON on stdin and in argv) stores and prints every string verbatim", async () => {
    for (const value of HOSTILE) {
      const created = await cli.run(["call", "arbeit_task_create", "-"], {
        input: JSON.stringify({ title: value, description: value }),
      });
      assertSuccess(created);
      assert.equal(created.json.data.task.title, value);
      const id = created.json.data.task.id;
      const got = await cli.ok(["call", "arbeit_task_get", JSON.stringify({ task_id: id })]);
      assert.equal(got.task.title, value);
      assert.equal(got.task.description, value);
    }
  });

  it("friendly subcommands take hostile argv verbatim (no shell in between)", async () => {
    for (const value of HOSTILE) {
      const created = await cli.ok(["task", "create", value, "--description", value, "--json"]);
      assert.equal(created.task.title, value);
      const added = await cli.ok(["context", "add", created.task.id, "decision", value, "--json"]);
      assert.equal(added.entry.content, value);
      const got = await cli.ok([
        "call",
        "arbeit_task_get",
        JSON.stringify({ task_id: created.task.id, include: ["context"] }),
      ]);
      assert.equal(got.task.description, value);
      assert.equal(got.context[0].content, value);
    }
  });

  it("NUL and lone surrogates in JSON arguments: exit 1 with a clear envelope, nothing written", async () => {
    for (const [json, pattern] of [
      ['{"title": "a\\u0000b"}', /title: must not contain NUL bytes/],
      ['{"title": "a\\ud800b"}', /title: must be valid Unicode/],
    ] as const) {
      const result = await cli.run(["call", "arbeit_task_create", json]);
      assert.equal(result.code, 1);
      assert.equal(result.json.success, false);
      assert.equal(result.json.error.code, "INVALID_ARGUMENT");
      assert.match(result.json.error.message, pattern);
    }
    const listed = await cli.ok(["call", "arbeit_query", '{"query": "tasks", "params": {"limit": 1000}}']);
    assert.ok(listed.tasks.every((t: any) => !t.title.includes("\u0000")));
  });
});
