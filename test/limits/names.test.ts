import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { MAX_NAME_LENGTH } from "../../src/domain/identity.js";
import type { Caller } from "../../src/service/caller.js";
import { openTestProject, type TestProject } from "../helpers/service.js";

/**
 * Agent, session and list names travel into every row and event a caller writes: each is 1 to
 * 128 characters, no control characters, valid Unicode. Anything else is INVALID_ARGUMENT naming
 * the field, and nothing is written: a NUL would break Postgres text, a lone surrogate would be
 * stored as a different name than the one given and could never be matched (or released) again.
 */

let project: TestProject;
let taskId: string;
before(async () => {
  project = await openTestProject();
  taskId = (await project.ok("arbeit_task_create", { title: "host" })).task.id;
});
after(() => project.close());

const rowCount = () =>
  ["events", "tasks", "idempotency", "session_state"].map(
    (table) => (project.store.driver.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n,
  );

const BAD: Array<[string, string]> = [
  ["a NUL byte", "ag\u0000ent"],
  ["a newline", "two\nlines"],
  ["an escape character", "\u001b[31mred"],
  ["a DEL character", "del\u007f"],
  ["a lone high surrogate", "broken\ud800"],
  ["a lone low surrogate", "\udc00broken"],
  ["129 characters", "n".repeat(MAX_NAME_LENGTH + 1)],
  ["nothing", ""],
];

/** Where a name can come from: tool arguments and the caller itself. */
const FIELDS: Array<{
  field: string;
  call: (name: string) => [tool: string, args: unknown, caller?: Partial<Caller>];
}> = [
  { field: "owner", call: (name) => ["arbeit_task_create", { title: "t", owner: name }] },
  { field: "owner", call: (name) => ["arbeit_task_update", { task_id: taskId, owner: name }] },
  { field: "list_id", call: (name) => ["arbeit_task_create", { title: "t", list_id: name }] },
  { field: "list_id", call: (name) => ["arbeit_task_claim", { next: true, list_id: name }] },
  { field: "params.list_id", call: (name) => ["arbeit_query", { query: "ready", params: { list_id: name } }] },
  { field: "params.owner", call: (name) => ["arbeit_query", { query: "tasks", params: { owner: name } }] },
  { field: "session", call: (name) => ["arbeit_resume", { session: name }] },
  { field: "agent", call: (name) => ["arbeit_task_claim", { task_id: taskId }, { agent: name }] },
  { field: "session", call: (name) => ["arbeit_task_start_work", { task_id: taskId }, { session: name }] },
  { field: "list", call: (name) => ["arbeit_task_create", { title: "t" }, { list_id: name }] },
  {
    field: "session",
    call: (name) => ["arbeit_task_create", { title: "t", request_id: "r1" }, { session: name }],
  },
];

describe("names are validated like any field", () => {
  for (const { field, call } of FIELDS) {
    for (const [what, bad] of BAD) {
      const [tool] = call("x");
      it(`${tool} refuses ${what} in ${field} with INVALID_ARGUMENT, writing nothing`, async () => {
        const before = rowCount();
        const [, args, caller] = call(bad);
        const envelope = await project.call(tool, args, caller);
        assert.equal(envelope.success, false, JSON.stringify(envelope));
        if (envelope.success) return;
        assert.equal(envelope.error.code, "INVALID_ARGUMENT", JSON.stringify(envelope.error));
        assert.match(JSON.stringify(envelope.error), new RegExp(field.split(".").at(-1)!));
        assert.deepEqual(rowCount(), before);
      });
    }
  }

  it("accepts names of exactly 128 characters, in any script", async () => {
    const long = "é".repeat(MAX_NAME_LENGTH);
    const created = await project.ok("arbeit_task_create", { title: "t", owner: long }, { agent: long, session: long });
    assert.equal(created.task.owner, long);
    const claimed = await project.ok(
      "arbeit_task_claim",
      { task_id: taskId },
      { agent: "名前", session: "😀".repeat(64) },
    );
    assert.equal(claimed.task.owner, "名前");
    const released = await project.ok(
      "arbeit_task_claim",
      { task_id: taskId, action: "release" },
      { agent: "名前", session: "😀".repeat(64) },
    );
    assert.equal(released.released, true);
  });
});
