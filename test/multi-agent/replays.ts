import type { Caller } from "../../src/service/caller.js";
import { alice, bob } from "./helpers.js";

/** What a replay case needs of a project: the SQLite test project and the store contract's both fit. */
export interface ReplayProject {
  ok(tool: string, args: unknown, caller?: Partial<Caller>): Promise<any>;
}

async function task(project: ReplayProject, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await project.ok("arbeit_task_create", { title, ...extra }, alice)).task.id;
}

/**
 * One retry per kind of write, each set up so that running the call a second time would leave a
 * mark: between the first call and its retry another agent (or the same one, without the
 * request_id) changes what the call changed, and the clock moves on. A retry must hand back the
 * first response and leave every row as it was; it must not put the change back, bump a version,
 * push a lease or a cursor forward, or log an event.
 */
export interface ReplayCase {
  tool: string;
  /** Builds what the call needs and returns its arguments. */
  setup(project: ReplayProject): Promise<Record<string, unknown>>;
  /** Runs between the call and its retry: what a second run would visibly undo or redo. */
  meanwhile?(project: ReplayProject, args: Record<string, unknown>): Promise<void>;
}

export const REPLAYS: Record<string, ReplayCase> = {
  "a task create": {
    tool: "arbeit_task_create",
    setup: async () => ({ title: "Once" }),
  },
  "a task update": {
    tool: "arbeit_task_update",
    setup: async (p) => ({ task_id: await task(p, "A", { priority: 2 }), priority: 0 }),
    meanwhile: async (p, args) => void (await p.ok("arbeit_task_update", { task_id: args.task_id, priority: 3 }, bob)),
  },
  "a completion": {
    tool: "arbeit_task_update",
    setup: async (p) => ({ task_id: await task(p, "A"), status: "completed" }),
    meanwhile: async (p, args) =>
      void (await p.ok("arbeit_task_update", { task_id: args.task_id, status: "open" }, bob)),
  },
  "a task delete": {
    tool: "arbeit_task_delete",
    setup: async (p) => ({ task_id: await task(p, "Doomed") }),
  },
  "a start of work": {
    tool: "arbeit_task_start_work",
    setup: async (p) => ({ task_id: await task(p, "A") }),
    meanwhile: async (p, args) => void (await p.ok("arbeit_task_stop_work", { task_id: args.task_id }, alice)),
  },
  "a stop of work": {
    tool: "arbeit_task_stop_work",
    setup: async (p) => {
      const id = await task(p, "A");
      await p.ok("arbeit_task_start_work", { task_id: id }, alice);
      return { task_id: id };
    },
    meanwhile: async (p, args) => void (await p.ok("arbeit_task_start_work", { task_id: args.task_id }, alice)),
  },
  "a context entry": {
    tool: "arbeit_context_add",
    setup: async (p) => ({ task_id: await task(p, "A"), type: "note", content: "n" }),
  },
  "progress steps": {
    tool: "arbeit_progress_add",
    setup: async (p) => ({ task_id: await task(p, "A"), items: ["step"] }),
  },
  "a relationship added": {
    tool: "arbeit_relationship",
    setup: async (p) => ({
      action: "add",
      from_task_id: await task(p, "A"),
      to_task_id: await task(p, "B"),
      type: "blocks",
    }),
    meanwhile: async (p, args) => void (await p.ok("arbeit_relationship", { ...args, action: "remove" }, bob)),
  },
  "a relationship removed": {
    tool: "arbeit_relationship",
    setup: async (p) => {
      const link = { from_task_id: await task(p, "A"), to_task_id: await task(p, "B"), type: "blocks" };
      await p.ok("arbeit_relationship", { ...link, action: "add" }, alice);
      return { ...link, action: "remove" };
    },
    meanwhile: async (p, args) => void (await p.ok("arbeit_relationship", { ...args, action: "add" }, bob)),
  },
  "a claim": {
    tool: "arbeit_task_claim",
    setup: async (p) => ({ task_id: await task(p, "A") }),
    meanwhile: async (p, args) =>
      void (await p.ok("arbeit_task_claim", { task_id: args.task_id, action: "release" }, alice)),
  },
  "a release": {
    tool: "arbeit_task_claim",
    setup: async (p) => {
      const id = await task(p, "A");
      await p.ok("arbeit_task_claim", { task_id: id }, alice);
      return { task_id: id, action: "release" };
    },
    meanwhile: async (p, args) => void (await p.ok("arbeit_task_claim", { task_id: args.task_id }, alice)),
  },
  "a resume": {
    tool: "arbeit_resume",
    setup: async (p) => {
      await p.ok("arbeit_task_start_work", { task_id: await task(p, "A") }, alice);
      return {};
    },
    meanwhile: async (p) => void (await task(p, "Written after the briefing")),
  },
  "a memory set": {
    tool: "arbeit_memory",
    setup: async () => ({ action: "set", key: "k", value: 1 }),
    meanwhile: async (p) => void (await p.ok("arbeit_memory", { action: "set", key: "k", value: 2 }, bob)),
  },
  "a memory reinforcement": {
    tool: "arbeit_memory",
    setup: async (p) => {
      await p.ok("arbeit_memory", { action: "set", key: "k", value: 1 }, alice);
      return { action: "set", key: "k", value: 1 };
    },
  },
  "a memory gc": {
    tool: "arbeit_memory",
    // Expired by the time of the retry, which must not collect it: the first run found nothing.
    setup: async (p) => {
      await p.ok("arbeit_memory", { action: "set", key: "k", value: 1, ttl_seconds: 1 }, alice);
      return { action: "gc" };
    },
  },
  "a memory delete": {
    tool: "arbeit_memory",
    setup: async (p) => {
      await p.ok("arbeit_memory", { action: "set", key: "k", value: 1 }, alice);
      return { action: "delete", key: "k" };
    },
    meanwhile: async (p) => void (await p.ok("arbeit_memory", { action: "set", key: "k", value: 2 }, bob)),
  },
  "a memory merge": {
    tool: "arbeit_memory",
    // A second run finds the merged keys gone: MEMORY_NOT_FOUND.
    setup: async (p) => {
      await p.ok("arbeit_memory", { action: "set", key: "a", value: "npm test" }, alice);
      await p.ok("arbeit_memory", { action: "set", key: "b", value: "run npm test" }, alice);
      return { action: "merge", keys: ["a", "b"], value: "Run npm test" };
    },
  },
  "a batch": {
    tool: "arbeit_batch",
    // A second run would create the task again, with its note.
    setup: async () => ({
      operations: [
        { tool: "arbeit_task_create", args: { title: "Batched" }, ref: "t" },
        { tool: "arbeit_context_add", args: { task_id: "$t", type: "note", content: "once" } },
      ],
    }),
  },
};

/** Tools with a request_id whose second run writes nothing, so a replay of them has nothing to show. */
export const HARMLESS_TWICE = ["arbeit_progress_complete"];
