import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { serverInTempProject } from "./mcp-client.js";

/** arbeit_batch through the real MCP SDK client: the same transaction and answers as everywhere. */
describe("arbeit mcp: arbeit_batch", () => {
  const server = serverInTempProject({ init: true });

  it("creates a task and its first decision in one call, through a $ref", async () => {
    const data = await server.mcp.ok("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "Over MCP" }, ref: "t" },
        { tool: "arbeit_context_add", args: { task_id: "$t", type: "decision", content: "One call" } },
      ],
    });
    const id = data.results[0].data.task.id;
    const got = await server.mcp.ok("arbeit_task_get", { task_id: id, include: ["context"] });
    assert.equal(got.context[0].content, "One call");
  });

  it("a failure at the last operation is an error result naming it, and nothing is written", async () => {
    const before = await server.mcp.ok("arbeit_query", { query: "tasks", params: { limit: 1000 } });
    const { isError, envelope } = await server.mcp.call("arbeit_batch", {
      operations: [
        { tool: "arbeit_task_create", args: { title: "Rolled back" } },
        { tool: "arbeit_task_start_work", args: { task_id: "tkt-00000000" } },
      ],
    });
    assert.equal(isError, true);
    assert.equal(envelope.error.code, "TASK_NOT_FOUND");
    assert.equal(envelope.error.details.operation_index, 1);
    const after = await server.mcp.ok("arbeit_query", { query: "tasks", params: { limit: 1000 } });
    assert.deepEqual(after.tasks, before.tasks);
  });
});
