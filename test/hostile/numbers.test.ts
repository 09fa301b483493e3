import assert from "node:assert/strict";
import { it } from "node:test";
import { forEachEngine } from "./engines.js";

/**
 * Numbers outside what a field takes are INVALID_ARGUMENT naming the field (docs/limits.md), never
 * FIELD_TOO_LARGE: past its range, past 2^53 (9007199254740993 cannot even be told from its
 * neighbour), or no number at all (JSON's 1e400 arrives as Infinity). A number flag on the command
 * line takes plain decimal only.
 */

const HUGE = ["9007199254740993", "1e20", "1e400", "-1e400", "-9007199254740993"];

/** Every numeric field of the tools, as the raw JSON text of one call with `N` in its place. */
const FIELDS: Array<[tool: string, template: string, field: string]> = [
  ["arbeit_task_create", `{"title": "t", "priority": N}`, "priority"],
  ["arbeit_task_update", `{"task_id": "tkt-aaaaaaaa", "priority": N}`, "priority"],
  ["arbeit_task_update", `{"task_id": "tkt-aaaaaaaa", "expected_version": N}`, "expected_version"],
  ["arbeit_task_delete", `{"task_id": "tkt-aaaaaaaa", "expected_version": N}`, "expected_version"],
  ["arbeit_task_start_work", `{"task_id": "tkt-aaaaaaaa", "expected_version": N}`, "expected_version"],
  ["arbeit_task_claim", `{"task_id": "tkt-aaaaaaaa", "lease_seconds": N}`, "lease_seconds"],
  ["arbeit_task_claim", `{"task_id": "tkt-aaaaaaaa", "expected_version": N}`, "expected_version"],
  ["arbeit_resume", `{"max_tokens": N}`, "max_tokens"],
  ["arbeit_memory", `{"action": "set", "key": "k", "value": 1, "ttl_seconds": N}`, "ttl_seconds"],
  ["arbeit_memory", `{"action": "list", "limit": N}`, "limit"],
  ["arbeit_query", `{"query": "tasks", "params": {"limit": N}}`, "params.limit"],
  ["arbeit_query", `{"query": "events", "params": {"after_seq": N}}`, "params.after_seq"],
  ["arbeit_query", `{"query": "stale_tasks", "params": {"days": N}}`, "params.days"],
];

forEachEngine("numbers out of range", (project) => {
  it("every numeric field refuses numbers past 2^53, past its range and Infinity with INVALID_ARGUMENT naming it", async () => {
    const p = await project();
    for (const [tool, template, field] of FIELDS) {
      for (const number of HUGE) {
        const result = await p.cli(["call", tool, template.replace("N", number)]);
        const label = `${tool} ${field}=${number}`;
        assert.equal(result.code, 1, `${label}: ${result.stderr}`);
        assert.equal(result.json.error.code, "INVALID_ARGUMENT", `${label}: ${result.json.error.message}`);
        assert.deepEqual(
          result.json.error.details.issues.map((issue: { path: string }) => issue.path),
          [field],
          `${label}: one issue, on the field`,
        );
        assert.doesNotMatch(result.json.error.message, /not a Infinity|not an? -?Infinity/, label);
      }
    }
    assert.deepEqual((await p.ok("arbeit_query", { query: "tasks" })).tasks, []);
  });

  it("says what a number must be: the field's own range, a whole number within ±(2^53 - 1), a finite number", async () => {
    const p = await project();
    const message = async (args: string) =>
      (await p.cli(["call", "arbeit_task_update", args])).json.error.message as string;
    assert.match(
      await message(`{"task_id": "tkt-aaaaaaaa", "priority": 9007199254740993}`),
      /priority: too large \(limit 4\)\.$/,
    );
    assert.match(
      await message(`{"task_id": "tkt-aaaaaaaa", "expected_version": 9007199254740993}`),
      /expected_version: must be a whole number from -9007199254740991 to 9007199254740991\.$/,
    );
    assert.match(
      await message(`{"task_id": "tkt-aaaaaaaa", "expected_version": 1e400}`),
      /expected_version: must be a finite number, not Infinity\.$/,
    );
  });

  it("a number flag takes plain decimal digits only: 0x3, ' 3', +3, 1e0 and 3.0 are refused, -1 is out of range", async () => {
    const p = await project();
    for (const raw of ["0x3", " 3", "3 ", "+3", "1e0", "3.0", "", "Infinity"]) {
      const result = await p.cli(["task", "create", "t", "--priority", raw, "--json"]);
      assert.equal(result.code, 1, `--priority ${JSON.stringify(raw)}: ${result.stdout}`);
      assert.equal(result.json.error.code, "INVALID_ARGUMENT");
      assert.match(result.json.error.message, /priority: must be a number, not a string/);
    }
    const negative = await p.cli(["task", "create", "t", "--priority", "-1", "--json"]);
    assert.match(negative.json.error.message, /priority: must be at least 0/);
    const huge = await p.cli(["task", "create", "t", "--priority", "9007199254740993", "--json"]);
    assert.equal(huge.json.error.code, "INVALID_ARGUMENT");
    assert.deepEqual((await p.ok("arbeit_query", { query: "tasks" })).tasks, []);

    // Plain decimal works, and a fraction where the field takes one.
    const made = await p.cli(["task", "create", "t", "--priority", "3", "--json"]);
    assert.equal(made.json.data.task.priority, 3);
    const stale = await p.cli(["query", "stale_tasks", "--days", "1.5", "--json"]);
    assert.equal(stale.code, 0, stale.stdout);
  });
});
