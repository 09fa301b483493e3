import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ERROR_CODES } from "../../src/domain/errors.js";
import { LIMITS } from "../../src/schemas/limits.js";
import { ERROR_CASES } from "./error-cases.js";
import { createTask, expectCallError, expectError, expectQueryError, useProject } from "./helpers.js";

/** Every documented error code, as the envelope carries it. */

const DOCUMENTED = [
  // the task graph and its records
  "NOT_INITIALIZED",
  "ALREADY_INITIALIZED",
  "TASK_NOT_FOUND",
  "ENTRY_NOT_FOUND",
  "MEMORY_NOT_FOUND",
  "PARENT_NOT_FOUND",
  "MAX_DEPTH_EXCEEDED",
  "CIRCULAR_DEPENDENCY",
  "RELATIONSHIP_EXISTS",
  "HAS_CHILDREN",
  "ALREADY_WORKING",
  "ALREADY_SUPERSEDED",
  "INVALID_STATUS",
  "INVALID_TYPE",
  // typed tasks and their transitions
  "INVALID_TEMPLATE",
  "TITLE_REQUIRED",
  "INTENT_REQUIRED",
  "DESCRIPTION_REQUIRED",
  "PLAN_REQUIRED",
  "BLOCKER_NOT_FOUND",
  "INVALID_BLOCKER",
  "DUPLICATE_BLOCKERS",
  // input checks (ALREADY_CLAIMED, SCHEMA_TOO_NEW and INTERNAL_ERROR are specified elsewhere)
  "INVALID_ARGUMENT",
  "INTENT_IMMUTABLE",
  "VERSION_CONFLICT",
  "FIELD_TOO_LARGE",
  "INVALID_ID",
  "INVALID_METADATA",
  "UNKNOWN_QUERY",
];

describe("error codes", () => {
  it("are all known to the domain", () => {
    for (const code of DOCUMENTED) assert.ok((ERROR_CODES as string[]).includes(code), code);
  });

  it("each have a failing call here (NOT_INITIALIZED: init.test.ts)", () => {
    const covered = new Set(ERROR_CASES.map((testCase) => testCase.code));
    assert.deepEqual(
      DOCUMENTED.filter((code) => code !== "NOT_INITIALIZED" && !covered.has(code)),
      [],
    );
  });

  const project = useProject();

  for (const testCase of ERROR_CASES) {
    it(`${testCase.code}: ${testCase.tool}, ${testCase.name}, with message and suggestions`, async () => {
      const p = project();
      expectError(await p.call(testCase.tool, await testCase.setup(p)), testCase.code);
    });
  }
});

describe("TITLE_REQUIRED", () => {
  const project = useProject();

  for (const [what, args] of [
    ["missing", {}],
    ["empty", { title: "" }],
    ["whitespace", { title: " \t\n" }],
    ["null", { title: null }],
  ] as const) {
    it(`is raised for a ${what} title on create`, async () => {
      await expectCallError(project(), "arbeit_task_create", args, "TITLE_REQUIRED");
    });
  }

  it("is raised for an empty or whitespace title on update", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, title: "" }, "TITLE_REQUIRED");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, title: "  " }, "TITLE_REQUIRED");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, title: null }, "TITLE_REQUIRED");
  });
});

describe("enum values get their own codes, not INVALID_ARGUMENT", () => {
  const project = useProject();

  it("INVALID_STATUS on create and update", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_create", { title: "t", status: "blocked" }, "INVALID_STATUS");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, status: "ready" }, "INVALID_STATUS");
  });

  it("INVALID_TYPE for task, context and relationship types", async () => {
    const p = project();
    const [a, b] = [await createTask(p, "a"), await createTask(p, "b")];
    await expectCallError(p, "arbeit_task_update", { task_id: a.id, type: "story" }, "INVALID_TYPE");
    await expectCallError(p, "arbeit_context_add", { task_id: a.id, type: "idea", content: "c" }, "INVALID_TYPE");
    await expectCallError(
      p,
      "arbeit_relationship",
      { action: "add", from_task_id: a.id, to_task_id: b.id, type: "depends_on" },
      "INVALID_TYPE",
    );
  });
});

describe("INTENT_IMMUTABLE", () => {
  const project = useProject();

  it("is raised for a different intent, and leaves the intent as it was", async () => {
    const p = project();
    const task = await createTask(p, "t", { intent: "original" });
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, intent: "changed" }, "INTENT_IMMUTABLE");
    const after = (await p.ok("arbeit_task_get", { task_id: task.id })).task;
    assert.equal(after.intent, "original");
  });

  it("is not raised for a blank intent, which counts as unset (else the task could never start)", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "feature", intent: "  " });
    const { task: after } = await p.ok("arbeit_task_update", { task_id: task.id, intent: "the real reason" });
    assert.equal(after.intent, "the real reason");
  });

  it("is raised once an intent set by update is changed again", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await p.ok("arbeit_task_update", { task_id: task.id, intent: "later" });
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, intent: "changed" }, "INTENT_IMMUTABLE");
  });
});

describe("INVALID_ARGUMENT", () => {
  const project = useProject();

  it("is raised for an unknown field, naming it", async () => {
    const error = await expectCallError(
      project(),
      "arbeit_task_create",
      { title: "t", colour: "red" },
      "INVALID_ARGUMENT",
    );
    assert.match(error.message, /colour/);
  });

  it("is raised for a value of the wrong type", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_create", { title: 42 }, "INVALID_ARGUMENT");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, priority: "high" }, "INVALID_ARGUMENT");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, priority: 9 }, "INVALID_ARGUMENT");
    await expectCallError(p, "arbeit_task_get", { task_id: task.id, include: "context" }, "INVALID_ARGUMENT");
    await expectCallError(p, "arbeit_progress_add", { task_id: task.id, items: "one" }, "INVALID_ARGUMENT");
  });

  it("is raised for arguments that are not an object", async () => {
    await expectCallError(project(), "arbeit_task_get", "tkt-aaaaaaaa", "INVALID_ARGUMENT");
  });

  it("is raised for an unknown include section", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_get", { task_id: task.id, include: ["everything"] }, "INVALID_ARGUMENT");
  });
});

describe("FIELD_TOO_LARGE", () => {
  const project = useProject();

  it("accepts a title of exactly the limit", async () => {
    const task = await createTask(project(), "x".repeat(LIMITS.title));
    assert.equal(task.title.length, LIMITS.title);
  });

  it("is raised for text fields over their limits", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const long = "x".repeat(LIMITS.text + 1);
    for (const field of ["intent", "description", "plan"]) {
      await expectCallError(p, "arbeit_task_create", { title: "t", [field]: long }, "FIELD_TOO_LARGE");
    }
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, title: "x".repeat(501) }, "FIELD_TOO_LARGE");
    await expectCallError(
      p,
      "arbeit_context_add",
      { task_id: task.id, type: "note", content: "x".repeat(LIMITS.context_content + 1) },
      "FIELD_TOO_LARGE",
    );
    await expectCallError(
      p,
      "arbeit_progress_add",
      { task_id: task.id, items: ["x".repeat(LIMITS.progress_item + 1)] },
      "FIELD_TOO_LARGE",
    );
  });

  it("is raised for lists and metadata over their limits", async () => {
    const p = project();
    const task = await createTask(p, "t");
    const items = Array.from({ length: LIMITS.progress_items + 1 }, (_, i) => `step ${i}`);
    await expectCallError(p, "arbeit_progress_add", { task_id: task.id, items }, "FIELD_TOO_LARGE");
    const ids = Array.from({ length: LIMITS.id_list + 1 }, (_, i) => `tkt-${String(i).padStart(8, "0")}`);
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, blocked_by: ids }, "FIELD_TOO_LARGE");
    const metadata = { blob: "x".repeat(LIMITS.metadata_bytes) };
    await expectCallError(
      p,
      "arbeit_context_add",
      { task_id: task.id, type: "note", content: "c", metadata },
      "FIELD_TOO_LARGE",
    );
  });
});

describe("INVALID_ID", () => {
  const project = useProject();

  it("is raised for malformed ids in every id field", async () => {
    const p = project();
    const task = await createTask(p, "t");
    await expectCallError(p, "arbeit_task_get", { task_id: "TKT-AAAAAAAA" }, "INVALID_ID");
    await expectCallError(p, "arbeit_task_create", { title: "t", parent_id: "parent" }, "INVALID_ID");
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, blocked_by: ["tkt-1"] }, "INVALID_ID");
    await expectCallError(p, "arbeit_progress_complete", { item_ids: ["ctx-aaaaaaaa"] }, "INVALID_ID");
    await expectCallError(
      p,
      "arbeit_relationship",
      { action: "add", from_task_id: task.id, to_task_id: "tkt-", type: "blocks" },
      "INVALID_ID",
    );
    await expectQueryError(p, "children_of", { task_id: "x" }, "INVALID_ID");
  });
});

describe("INVALID_METADATA", () => {
  const project = useProject();

  it("is raised for metadata that is an array, a string or null", async () => {
    const p = project();
    const task = await createTask(p, "t");
    for (const metadata of [[1, 2], "note", null]) {
      await expectCallError(
        p,
        "arbeit_context_add",
        { task_id: task.id, type: "note", content: "c", metadata },
        "INVALID_METADATA",
      );
    }
  });
});

describe("messages name types with the right article", () => {
  const project = useProject();

  it("an epic and an investigation missing fields for a transition", async () => {
    const p = project();
    const epic = await createTask(p, "e", { type: "epic" });
    const research = await createTask(p, "r", { type: "investigation" });
    const feature = await createTask(p, "f", { type: "feature" });
    const message = async (id: string, code: string) =>
      (await expectCallError(p, "arbeit_task_update", { task_id: id, status: "in_progress" }, code)).message;
    assert.match(await message(epic.id, "INTENT_REQUIRED"), /^An epic task needs/);
    assert.match(await message(research.id, "DESCRIPTION_REQUIRED"), /^An investigation task needs/);
    assert.match(await message(feature.id, "INTENT_REQUIRED"), /^A feature task needs/);
  });

  it("a template that makes an epic or an investigation", async () => {
    const p = project();
    for (const [template, type, expected] of [
      ["epic", "bug", /makes an epic task/],
      ["investigation", "chore", /makes an investigation task/],
      ["bug", "epic", /makes a bug task/],
    ] as const) {
      const error = await expectCallError(p, "arbeit_task_create", { title: "t", template, type }, "INVALID_TEMPLATE");
      assert.match(error.message, expected);
    }
  });

  it("an agent name the caller got wrong", async () => {
    const p = project();
    const error = await expectCallError(p, "arbeit_task_create", { title: "t" }, "INVALID_ARGUMENT", {
      agent: "bad\u0000agent",
    });
    assert.match(error.suggestions!.join(" "), /Give an agent /);
  });
});

describe("a failed create suggests fixing the create", () => {
  const project = useProject();

  for (const [what, args, code] of [
    ["a typed task created in progress without intent", { type: "feature", status: "in_progress" }, "INTENT_REQUIRED"],
    [
      "an investigation created in progress without a plan",
      { type: "investigation", description: "d", status: "in_progress" },
      "PLAN_REQUIRED",
    ],
    [
      "an epic created completed without a description",
      { type: "epic", intent: "i", status: "completed" },
      "DESCRIPTION_REQUIRED",
    ],
  ] as const) {
    it(what, async () => {
      const error = await expectCallError(project(), "arbeit_task_create", { title: "t", ...args }, code);
      const suggestions = error.suggestions!.join(" ");
      assert.match(suggestions, /arbeit_task_create/);
      assert.doesNotMatch(suggestions, /arbeit_task_update/);
    });
  }

  it("while start_work on an existing task still suggests filling it in with an update", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "feature" });
    const error = await expectCallError(p, "arbeit_task_start_work", { task_id: task.id }, "INTENT_REQUIRED");
    assert.match(error.suggestions!.join(" "), /arbeit_task_update/);
  });
});
