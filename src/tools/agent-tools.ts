import { claimInput, memoryInput, resumeInput } from "../schemas/inputs.js";
import { defineTool, destructive, IDEMPOTENT_WRITE, WRITE } from "./define.js";

export const claim = defineTool({
  name: "arbeit_task_claim",
  title: "Claim task",
  description:
    "Claim a task (task_id, or next: true for the best ready one) under a lease that keeps other agents off; renew (alone: all yours) or release. paths: files/globs likewise (shared: not exclusive).",
  input: claimInput,
  annotations: WRITE,
  run: async (ctx, args) => (await ctx.service()).claim(args, ctx.caller),
});

export const resume = defineTool({
  name: "arbeit_resume",
  title: "Resume briefing",
  description:
    "Start here each session: your focus task with context, progress, files, memory and news since you last looked (peek: leave it unseen).",
  input: resumeInput,
  annotations: IDEMPOTENT_WRITE,
  run: async (ctx, args) => (await ctx.service()).resume(args, ctx.caller),
});

export const memory = defineTool({
  name: "arbeit_memory",
  title: "Memory",
  description: "Key/value notes across sessions; similar finds duplicates, merge folds keys into key.",
  input: memoryInput,
  annotations: destructive(IDEMPOTENT_WRITE),
  run: async (ctx, args) => (await ctx.service()).memory(args, ctx.caller),
});
