import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serverInTempProject } from "./mcp-client.js";

describe("arbeit mcp: errors come back as the envelope", () => {
  const server = serverInTempProject({ init: true });

  const cases: [string, string, Record<string, unknown>, string][] = [
    ["a status outside the enum", "arbeit_task_create", { title: "x", status: "done" }, "INVALID_STATUS"],
    ["a missing title", "arbeit_task_create", { type: "bug" }, "TITLE_REQUIRED"],
    ["an empty title", "arbeit_task_create", { title: "" }, "TITLE_REQUIRED"],
    ["an unknown field", "arbeit_task_create", { title: "x", colour: "red" }, "INVALID_ARGUMENT"],
    ["a type outside the enum", "arbeit_task_create", { title: "x", type: "story" }, "INVALID_TYPE"],
    ["a malformed id", "arbeit_task_get", { task_id: "42" }, "INVALID_ID"],
    ["an unknown query", "arbeit_query", { query: "everything" }, "UNKNOWN_QUERY"],
    ["a task that does not exist", "arbeit_task_get", { task_id: "tkt-zzzzzzzz" }, "TASK_NOT_FOUND"],
    ["an oversized title", "arbeit_task_create", { title: "x".repeat(501) }, "FIELD_TOO_LARGE"],
  ];
  for (const [what, tool, args, code] of cases) {
    it(`${what} -> isError with ${code}`, async () => {
      const { isError, envelope, text } = await server.mcp.call(tool, args);
      assert.equal(isError, true);
      assert.equal(envelope.success, false);
      assert.equal(envelope.error.code, code);
      assert.equal(typeof envelope.error.message, "string");
      assert.ok(envelope.error.suggestions.length > 0);
      assert.deepEqual(JSON.parse(text), envelope);
    });
  }

  it("returns warnings with success", async () => {
    const blocker = (await server.mcp.ok("arbeit_task_create", { title: "Blocker" })).task;
    const blocked = (await server.mcp.ok("arbeit_task_create", { title: "Blocked", blocked_by: [blocker.id] })).task;
    const { isError, envelope } = await server.mcp.call("arbeit_task_start_work", { task_id: blocked.id });
    assert.equal(isError, false);
    assert.deepEqual(
      envelope.warnings.map((w: any) => w.code),
      ["HAS_BLOCKERS"],
    );
  });
});
