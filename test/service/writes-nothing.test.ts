import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ERROR_CASES } from "./error-cases.js";
import { assertWritesNothing, expectError, useProject } from "./helpers.js";

/**
 * "Always with nothing half-written": a failed call leaves every row of every table
 * and the event log exactly as they were.
 */
describe("a failed call writes nothing", () => {
  const project = useProject();

  for (const testCase of ERROR_CASES) {
    it(`${testCase.tool}: ${testCase.name} (${testCase.code})`, async () => {
      const p = project();
      const args = await testCase.setup(p);
      await assertWritesNothing(p, async () => {
        expectError(await p.call(testCase.tool, args), testCase.code);
      });
    });
  }

  it("has a failing case for every core tool", () => {
    const tools = new Set(ERROR_CASES.map((testCase) => testCase.tool));
    assert.deepEqual([...tools].sort(), [
      "arbeit_context_add",
      "arbeit_init",
      "arbeit_memory",
      "arbeit_progress_add",
      "arbeit_progress_complete",
      "arbeit_query",
      "arbeit_relationship",
      "arbeit_task_create",
      "arbeit_task_delete",
      "arbeit_task_get",
      "arbeit_task_start_work",
      "arbeit_task_stop_work",
      "arbeit_task_update",
    ]);
  });
});
