import { z } from "zod";
import { MAX_LEASE_SECONDS } from "../domain/claims.js";
import { MEMORY_SCOPES } from "../domain/types.js";
import { expectedVersion, jsonValue, listId, name, taskId, text } from "../schemas/common.js";
import { LIMITS } from "../schemas/limits.js";
import { defineTool, IDEMPOTENT_WRITE, WRITE } from "./define.js";

export const claim = defineTool({
  name: "arbeit_task_claim",
  title: "Claim task",
  description:
    "Atomically claim a task (task_id, or next: true for the best ready one) with a lease so no other agent takes it; renew or release it. Expired leases free the task.",
  input: () =>
    z.strictObject({
      action: z.enum(["claim", "renew", "release"]).optional(),
      task_id: taskId.optional(),
      next: z.boolean().optional(),
      lease_seconds: z.number().int().min(1).max(MAX_LEASE_SECONDS).optional().describe("Default 900"),
      list_id: listId.optional(),
      expected_version: expectedVersion.optional(),
    }),
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).claim(args, ctx.caller),
});

export const resume = defineTool({
  name: "arbeit_resume",
  title: "Resume briefing",
  description:
    "Start here in a new session: your focus task with its context, progress, files, memory and what changed since your last look. peek reads without moving your cursor.",
  input: () =>
    z.strictObject({
      list_id: listId.optional(),
      peek: z.boolean().optional(),
      max_tokens: z.number().int().min(200).max(50_000).optional().describe("Default 1500"),
      session: name.min(1).optional(),
    }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).resume(args, ctx.caller),
});

export const memory = defineTool({
  name: "arbeit_memory",
  title: "Memory",
  description:
    "Key/value notes that outlive sessions: set (upsert, optional ttl_seconds), get, list (prefix), delete; scope project (default), list, task or agent.",
  input: () =>
    z.strictObject({
      action: z.enum(["set", "get", "list", "delete"]),
      scope: z.enum(MEMORY_SCOPES).optional(),
      scope_id: name.min(1).optional().describe("List id, task id or agent; defaults to yours"),
      key: text(LIMITS.name).min(1).optional(),
      value: jsonValue(z.unknown(), LIMITS.memory_value_bytes).optional().describe("Any JSON"),
      ttl_seconds: z.number().int().min(1).max(LIMITS.ttl_seconds).optional(),
      prefix: text(LIMITS.name).optional(),
      limit: z.number().int().min(1).max(LIMITS.query_limit).optional(),
    }),
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).memory(args, ctx.caller),
});
