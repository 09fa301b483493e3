import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TEMPLATES } from "../../src/domain/templates.js";
import { createTask, expectCallError, expectError, FILLED, updateTask, useProject } from "./helpers.js";

/** Lenient create, strict status transitions. */

const REQUIRED: Record<string, string[]> = {
  epic: ["intent", "description"],
  feature: ["intent", "description", "plan"],
  bug: ["intent", "description", "plan"],
  investigation: ["description", "plan"],
  chore: ["description", "plan"],
};

const CODE: Record<string, string> = {
  intent: "INTENT_REQUIRED",
  description: "DESCRIPTION_REQUIRED",
  plan: "PLAN_REQUIRED",
};

/** The task fields of FILLED minus the ones named. */
function without(...fields: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(FILLED).filter(([field]) => !fields.includes(field)));
}

describe("lenient create", () => {
  const project = useProject();

  for (const [type, required] of Object.entries(REQUIRED)) {
    it(`creates a ${type} with nothing but a title and recommends ${required.join(", ")} and the plan template`, async () => {
      const data = await project().ok("arbeit_task_create", { title: "t", type });
      assert.equal(data.task.type, type);
      assert.deepEqual(data.recommendations.missing_fields, required);
      assert.equal(data.recommendations.plan_template, TEMPLATES[type as keyof typeof TEMPLATES].plan_template);
    });
  }

  it("recommends only the fields still missing", async () => {
    const data = await project().ok("arbeit_task_create", { title: "t", type: "bug", intent: "why" });
    assert.deepEqual(data.recommendations.missing_fields, ["description", "plan"]);
  });

  it("counts whitespace-only text as missing", async () => {
    const data = await project().ok("arbeit_task_create", { title: "t", type: "chore", description: "  ", plan: "p" });
    assert.deepEqual(data.recommendations.missing_fields, ["description"]);
  });

  it("returns no recommendations for a complete typed task", async () => {
    const data = await project().ok("arbeit_task_create", { title: "t", type: "feature", ...FILLED });
    assert.equal(data.recommendations, undefined);
  });

  it("recommends missing fields when an update gives a task a type", async () => {
    const p = project();
    const task = await createTask(p, "plain");
    const data = await updateTask(p, task.id, { type: "investigation" });
    assert.deepEqual(data.recommendations.missing_fields, ["description", "plan"]);
    assert.equal(data.recommendations.plan_template, TEMPLATES.investigation.plan_template);
  });
});

describe("templates", () => {
  const project = useProject();

  for (const name of Object.keys(TEMPLATES)) {
    it(`template ${name} sets the type when type is omitted and returns its plan stub`, async () => {
      const data = await project().ok("arbeit_task_create", { title: "t", template: name, ...FILLED });
      assert.equal(data.task.type, TEMPLATES[name as keyof typeof TEMPLATES].type);
      assert.equal(data.recommendations.plan_template, TEMPLATES[name as keyof typeof TEMPLATES].plan_template);
      assert.equal(data.recommendations.missing_fields, undefined);
    });
  }

  it("accepts a template together with the matching type", async () => {
    const data = await project().ok("arbeit_task_create", { title: "t", template: "bug", type: "bug" });
    assert.equal(data.task.type, "bug");
  });

  it("rejects a template that conflicts with the type (INVALID_TEMPLATE)", async () => {
    await expectCallError(
      project(),
      "arbeit_task_create",
      { title: "t", template: "bug", type: "epic" },
      "INVALID_TEMPLATE",
    );
  });

  it("rejects an unknown template (INVALID_TEMPLATE)", async () => {
    await expectCallError(project(), "arbeit_task_create", { title: "t", template: "spike" }, "INVALID_TEMPLATE");
  });
});

describe("strict transitions to in_progress", () => {
  const project = useProject();

  for (const [type, required] of Object.entries(REQUIRED)) {
    for (const field of required) {
      it(`refuses to start a ${type} without ${field} (${CODE[field]})`, async () => {
        const p = project();
        const task = await createTask(p, "t", { type, ...without(field) });
        const error = await expectCallError(
          p,
          "arbeit_task_update",
          { task_id: task.id, status: "in_progress" },
          CODE[field]!,
        );
        assert.deepEqual(error.details?.missing_fields, [field]);
      });
    }
  }

  it("reports every missing field and raises the code of the first", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "feature" });
    const error = expectError(
      await p.call("arbeit_task_update", { task_id: task.id, status: "in_progress" }),
      "INTENT_REQUIRED",
    );
    assert.deepEqual(error.details?.missing_fields, ["intent", "description", "plan"]);
  });

  it("lets an epic start without a plan", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "epic", ...without("plan") });
    assert.equal((await updateTask(p, task.id, { status: "in_progress" })).task.status, "in_progress");
  });

  it("counts fields given in the same update", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "feature" });
    const { task: after } = await updateTask(p, task.id, { status: "in_progress", ...FILLED });
    assert.equal(after.status, "in_progress");
    assert.equal(after.plan, FILLED.plan);
  });

  it("applies the same rule to arbeit_task_start_work", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "chore", ...without("plan") });
    await expectCallError(p, "arbeit_task_start_work", { task_id: task.id }, "PLAN_REQUIRED");
  });

  it("applies the same rule to a task created as in_progress", async () => {
    await expectCallError(
      project(),
      "arbeit_task_create",
      { title: "t", type: "bug", status: "in_progress", ...without("description") },
      "DESCRIPTION_REQUIRED",
    );
  });

  it("counts whitespace-only text as missing", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "investigation", description: "d", plan: " \n " });
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, status: "in_progress" }, "PLAN_REQUIRED");
  });
});

describe("strict transitions to completed", () => {
  const project = useProject();

  it("lets an epic complete with intent and description but no plan", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "epic", ...without("plan") });
    assert.equal((await updateTask(p, task.id, { status: "completed" })).task.status, "completed");
  });

  for (const type of ["feature", "bug", "investigation", "chore"]) {
    it(`requires a plan to complete a ${type}`, async () => {
      const p = project();
      const task = await createTask(p, "t", { type, ...without("plan") });
      await expectCallError(p, "arbeit_task_update", { task_id: task.id, status: "completed" }, "PLAN_REQUIRED");
    });
  }

  for (const type of Object.keys(REQUIRED)) {
    it(`requires a description to complete a ${type}`, async () => {
      const p = project();
      const task = await createTask(p, "t", { type, ...without("description") });
      await expectCallError(p, "arbeit_task_update", { task_id: task.id, status: "completed" }, "DESCRIPTION_REQUIRED");
    });
  }

  it("checks completion straight from open, without passing in_progress", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "investigation", description: "d" });
    await expectCallError(p, "arbeit_task_update", { task_id: task.id, status: "completed" }, "PLAN_REQUIRED");
    assert.equal((await updateTask(p, task.id, { status: "completed", plan: "p" })).task.status, "completed");
  });
});

describe("transitions without requirements", () => {
  const project = useProject();

  it("lets an untyped task move to every status with nothing but a title", async () => {
    const p = project();
    const task = await createTask(p, "plain");
    for (const status of ["in_progress", "completed", "open", "cancelled"]) {
      assert.equal((await updateTask(p, task.id, { status })).task.status, status);
    }
  });

  it("lets a typed task be cancelled or reopened without its fields", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "feature" });
    assert.equal((await updateTask(p, task.id, { status: "cancelled" })).task.status, "cancelled");
    assert.equal((await updateTask(p, task.id, { status: "open" })).task.status, "open");
  });

  it("does not re-check fields on updates that leave the status alone", async () => {
    const p = project();
    const task = await createTask(p, "t", { type: "feature", ...FILLED, status: "in_progress" });
    assert.equal((await updateTask(p, task.id, { title: "renamed" })).task.title, "renamed");
  });
});
