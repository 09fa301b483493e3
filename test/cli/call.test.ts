import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { TOOLS } from "../../src/tools/catalogue.js";
import { assertToolError, type CliProject, cliProject } from "./support.js";

/** `arbeit call` and `arbeit tools`: the surfaces scripts, hooks and host integrations build on. */
describe("arbeit call", () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject();
  });
  after(() => project.cleanup());

  it("reads its JSON arguments from standard input with -", async () => {
    const input = JSON.stringify({ title: "From stdin", intent: "Hooks pipe their arguments" });
    const created = await project.ok(["call", "arbeit_task_create", "-"], { input });
    assert.equal(created.task.title, "From stdin");
    assert.equal(created.task.intent, "Hooks pipe their arguments");

    const fetched = await project.ok(["call", "arbeit_task_get", "-"], {
      input: `{\n  "task_id": "${created.task.id}"\n}\n`,
    });
    assert.equal(fetched.task.id, created.task.id);
  });

  it("takes no arguments as {}", async () => {
    const data = await project.ok(["call", "arbeit_query", '{"query": "templates"}']);
    assert.ok(data.templates.length > 0);
    assertToolError(await project.run(["call", "arbeit_task_get"]), "INVALID_ARGUMENT");
    assertToolError(await project.run(["call", "arbeit_task_get", "-"], { input: "" }), "INVALID_ARGUMENT");
  });

  it("reports JSON that is not an object as a tool error, not a usage error", async () => {
    assertToolError(await project.run(["call", "arbeit_task_create", '["title"]']), "INVALID_ARGUMENT");
  });

  it("accepts global options before or after the tool name", async () => {
    const created = await project.ok(["--agent", "hook", "call", "arbeit_task_create", '{"title": "Agent first"}']);
    await project.ok([
      "call",
      "arbeit_task_start_work",
      JSON.stringify({ task_id: created.task.id }),
      "--agent",
      "hook",
    ]);
    const { events } = await project.ok(["query", "events", "--task-id", created.task.id]);
    assert.ok(events.every((event: { agent: string }) => event.agent === "hook"));
  });

  it("lets a session-bound tool name its own session", async () => {
    const { task } = await project.ok(["call", "arbeit_task_create", '{"title": "Session argument"}']);
    const started = await project.ok([
      "call",
      "arbeit_task_start_work",
      JSON.stringify({ task_id: task.id, session: "from-args" }),
    ]);
    assert.equal(started.session_id, "from-args");
  });
});

describe("arbeit tools", () => {
  let project: CliProject;
  before(async () => {
    project = await cliProject({ init: false });
  });
  after(() => project.cleanup());

  it("--json lists every tool in the catalogue with its input schema and annotations", async () => {
    const result = await project.run(["tools", "--json"]);
    assert.equal(result.code, 0);
    const { tools } = result.json;
    assert.deepEqual(
      tools.map((tool: { name: string }) => tool.name),
      TOOLS.map((tool) => tool.name),
    );
    for (const tool of tools) {
      assert.match(tool.name, /^arbeit_[a-z_]+$/);
      assert.ok(tool.description.length > 0, `${tool.name} has a description`);
      assert.equal(tool.input_schema.type, "object", `${tool.name} takes an object`);
      assert.equal(typeof tool.annotations.readOnlyHint, "boolean");
    }
    const create = tools.find((tool: { name: string }) => tool.name === "arbeit_task_create");
    assert.deepEqual(create.input_schema.required, ["title"]);
    assert.ok(create.input_schema.properties.parent_id);
  });

  it("prints the same JSON without --json when piped", async () => {
    const piped = await project.run(["tools"]);
    const forced = await project.run(["tools", "--json"]);
    assert.deepEqual(piped.json, forced.json);
  });
});
