import { claimInput, memoryInput, resumeInput } from "../schemas/inputs.js";
import { defineTool, IDEMPOTENT_WRITE, WRITE } from "./define.js";

export const claim = defineTool({
  name: "arbeit_task_claim",
  title: "Claim task",
  description:
    "Atomically claim a task (task_id, or next: true for the best ready one) with a lease so no other agent takes it; renew or release it. Expired leases free the task.",
  input: claimInput,
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).claim(args, ctx.caller),
});

export const resume = defineTool({
  name: "arbeit_resume",
  title: "Resume briefing",
  description:
    "Start here in a new session: your focus task with its context, progress, files, memory and what changed since your last look. peek reads without moving your cursor.",
  input: resumeInput,
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).resume(args, ctx.caller),
});

export const memory = defineTool({
  name: "arbeit_memory",
  title: "Memory",
  description:
    "Key/value notes that outlive sessions: set (upsert, optional ttl_seconds), get, list (prefix), delete, gc (expired); scope project (default), list, task or agent.",
  input: memoryInput,
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).memory(args, ctx.caller),
});
