import type { TestProject } from "../helpers/service.js";
import { createChain, createTask, createTasks, relateOk } from "./helpers.js";

/**
 * One failing call per error code, shared by errors.test.ts
 * (the code, message and suggestions) and writes-nothing.test.ts (the database is untouched).
 * Where it can, a case fails late, after earlier steps of the same call would have written.
 */
export interface ErrorCase {
  code: string;
  tool: string;
  name: string;
  /** Builds the state the call needs and returns its arguments. */
  setup(p: TestProject): Promise<unknown>;
}

const UNKNOWN_TASK = "tkt-zzzzzzzz";

async function oneTask(p: TestProject, fields: Record<string, unknown> = {}): Promise<string> {
  return (await createTask(p, "t", fields)).id;
}

export const ERROR_CASES: ErrorCase[] = [
  {
    code: "ALREADY_INITIALIZED",
    tool: "arbeit_init",
    name: "init in an initialised project",
    setup: async () => ({}),
  },
  {
    code: "TASK_NOT_FOUND",
    tool: "arbeit_task_get",
    name: "get of an unknown task",
    setup: async () => ({ task_id: UNKNOWN_TASK, include: ["context"] }),
  },
  {
    code: "TASK_NOT_FOUND",
    tool: "arbeit_task_stop_work",
    name: "stop work on an unknown task",
    setup: async () => ({ task_id: UNKNOWN_TASK }),
  },
  {
    code: "TASK_NOT_FOUND",
    tool: "arbeit_progress_add",
    name: "progress on an unknown task",
    setup: async () => ({ task_id: UNKNOWN_TASK, items: ["a", "b"] }),
  },
  {
    code: "ENTRY_NOT_FOUND",
    tool: "arbeit_progress_complete",
    name: "completing an unknown item among real ones",
    setup: async (p) => {
      const { items } = await p.ok("arbeit_progress_add", { task_id: await oneTask(p), items: ["a", "b"] });
      return { item_ids: [items[0].id, items[1].id, "prg-zzzzzzzz"] };
    },
  },
  {
    code: "ENTRY_NOT_FOUND",
    tool: "arbeit_context_add",
    name: "superseding an unknown entry",
    setup: async (p) => ({ task_id: await oneTask(p), type: "note", content: "c", supersede_entry_id: "ctx-zzzzzzzz" }),
  },
  {
    code: "MEMORY_NOT_FOUND",
    tool: "arbeit_memory",
    name: "merging an unknown key with real ones",
    setup: async (p) => {
      await p.ok("arbeit_memory", { action: "set", key: "a", value: "deploy with fly" });
      await p.ok("arbeit_memory", { action: "set", key: "b", value: "deploys use fly" });
      return { action: "merge", keys: ["a", "b", "nope"], key: "a", value: "Deploy with fly" };
    },
  },
  {
    code: "PARENT_NOT_FOUND",
    tool: "arbeit_task_create",
    name: "create under an unknown parent",
    setup: async () => ({ title: "t", parent_id: UNKNOWN_TASK }),
  },
  {
    code: "MAX_DEPTH_EXCEEDED",
    tool: "arbeit_task_create",
    name: "create below level 4",
    setup: async (p) => ({ title: "too deep", parent_id: (await createChain(p, 4)).at(-1)!.id }),
  },
  {
    code: "CIRCULAR_DEPENDENCY",
    tool: "arbeit_task_update",
    name: "update whose second new blocker closes a cycle",
    setup: async (p) => {
      const [task, free, old] = await createTasks(p, "task", "free", "old blocker");
      const dependant = await createTask(p, "dependant", { blocked_by: [task!.id] });
      await relateOk(p, "add", old!.id, "blocks", task!.id);
      return { task_id: task!.id, status: "in_progress", blocked_by: [free!.id, dependant.id] };
    },
  },
  {
    code: "CIRCULAR_DEPENDENCY",
    tool: "arbeit_relationship",
    name: "blocked_by edge closing a cycle",
    setup: async (p) => {
      const [a, b] = await createTasks(p, "a", "b");
      await relateOk(p, "add", a!.id, "blocks", b!.id);
      return { action: "add", from_task_id: a!.id, to_task_id: b!.id, type: "blocked_by" };
    },
  },
  {
    code: "TASK_NOT_FOUND",
    tool: "arbeit_relationship",
    name: "remove naming a task that does not exist",
    setup: async (p) => ({
      action: "remove",
      from_task_id: await oneTask(p),
      to_task_id: UNKNOWN_TASK,
      type: "blocks",
    }),
  },
  {
    code: "TASK_NOT_FOUND",
    tool: "arbeit_relationship",
    name: "remove from a task that does not exist",
    setup: async (p) => ({
      action: "remove",
      from_task_id: UNKNOWN_TASK,
      to_task_id: await oneTask(p),
      type: "child_of",
    }),
  },
  {
    code: "RELATIONSHIP_EXISTS",
    tool: "arbeit_relationship",
    name: "a second parent",
    setup: async (p) => {
      const [first, second] = await createTasks(p, "first", "second");
      const child = await createTask(p, "child", { parent_id: first!.id });
      return { action: "add", from_task_id: second!.id, to_task_id: child.id, type: "parent_of" };
    },
  },
  {
    code: "HAS_CHILDREN",
    tool: "arbeit_task_delete",
    name: "delete of a parent",
    setup: async (p) => {
      const [parent] = await createChain(p, 2);
      return { task_id: parent!.id };
    },
  },
  {
    code: "ALREADY_WORKING",
    tool: "arbeit_task_start_work",
    name: "start work on a second task",
    setup: async (p) => {
      const [a, b] = await createTasks(p, "a", "b");
      await p.ok("arbeit_task_start_work", { task_id: a!.id });
      return { task_id: b!.id };
    },
  },
  {
    code: "ALREADY_SUPERSEDED",
    tool: "arbeit_context_add",
    name: "superseding an entry twice",
    setup: async (p) => {
      const entry = { task_id: await oneTask(p), type: "note", content: "c" };
      const first = (await p.ok("arbeit_context_add", entry)).entry;
      await p.ok("arbeit_context_add", { ...entry, supersede_entry_id: first.id });
      return { ...entry, supersede_entry_id: first.id };
    },
  },
  {
    code: "INVALID_STATUS",
    tool: "arbeit_task_update",
    name: "an unknown status",
    setup: async (p) => ({ task_id: await oneTask(p), status: "done" }),
  },
  {
    code: "INVALID_TYPE",
    tool: "arbeit_task_create",
    name: "an unknown task type",
    setup: async () => ({ title: "t", type: "story" }),
  },
  {
    code: "INVALID_TEMPLATE",
    tool: "arbeit_task_create",
    name: "a template conflicting with the type",
    setup: async () => ({ title: "t", type: "epic", template: "bug" }),
  },
  {
    code: "TITLE_REQUIRED",
    tool: "arbeit_task_create",
    name: "a whitespace title",
    setup: async () => ({ title: "   " }),
  },
  {
    code: "TITLE_REQUIRED",
    tool: "arbeit_task_create",
    name: "a null title",
    setup: async () => ({ title: null }),
  },
  {
    code: "INTENT_REQUIRED",
    tool: "arbeit_task_update",
    name: "starting an epic without intent",
    setup: async (p) => ({ task_id: await oneTask(p, { type: "epic" }), description: "d", status: "in_progress" }),
  },
  {
    code: "DESCRIPTION_REQUIRED",
    tool: "arbeit_task_update",
    name: "starting an investigation without description",
    setup: async (p) => ({ task_id: await oneTask(p, { type: "investigation" }), plan: "p", status: "in_progress" }),
  },
  {
    code: "PLAN_REQUIRED",
    tool: "arbeit_task_start_work",
    name: "start work on a chore without a plan",
    setup: async (p) => ({ task_id: await oneTask(p, { type: "chore", description: "d" }) }),
  },
  {
    code: "BLOCKER_NOT_FOUND",
    tool: "arbeit_task_update",
    name: "a blocker list failing after a re-parenting",
    setup: async (p) => {
      const [task, oldParent, newParent] = await createTasks(p, "task", "old parent", "new parent");
      await relateOk(p, "add", oldParent!.id, "parent_of", task!.id);
      return { task_id: task!.id, title: "renamed", parent_id: newParent!.id, blocked_by: [UNKNOWN_TASK] };
    },
  },
  {
    code: "INVALID_BLOCKER",
    tool: "arbeit_task_update",
    name: "a task blocked by itself",
    setup: async (p) => {
      const id = await oneTask(p);
      return { task_id: id, blocked_by: [id] };
    },
  },
  {
    code: "DUPLICATE_BLOCKERS",
    tool: "arbeit_task_create",
    name: "the same blocker twice",
    setup: async (p) => {
      const id = await oneTask(p);
      return { title: "t", blocked_by: [id, id] };
    },
  },
  {
    code: "INVALID_ARGUMENT",
    tool: "arbeit_query",
    name: "query params of the wrong type",
    setup: async () => ({ query: "stale_tasks", params: { days: "seven" } }),
  },
  {
    code: "INTENT_IMMUTABLE",
    tool: "arbeit_task_update",
    name: "changing a set intent",
    setup: async (p) => ({ task_id: await oneTask(p, { intent: "first" }), title: "x", intent: "second" }),
  },
  {
    code: "VERSION_CONFLICT",
    tool: "arbeit_task_update",
    name: "a stale expected_version",
    setup: async (p) => ({ task_id: await oneTask(p), title: "x", expected_version: 7 }),
  },
  {
    code: "FIELD_TOO_LARGE",
    tool: "arbeit_task_create",
    name: "a title over 500 characters",
    setup: async () => ({ title: "x".repeat(501) }),
  },
  {
    code: "INVALID_ID",
    tool: "arbeit_task_get",
    name: "a malformed task id",
    setup: async () => ({ task_id: "42" }),
  },
  {
    code: "INVALID_METADATA",
    tool: "arbeit_context_add",
    name: "array metadata",
    setup: async (p) => ({ task_id: await oneTask(p), type: "note", content: "c", metadata: ["a"] }),
  },
  {
    code: "UNKNOWN_QUERY",
    tool: "arbeit_query",
    name: "an unknown query",
    setup: async () => ({ query: "everything" }),
  },
];
