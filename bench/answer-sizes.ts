/**
 * What an agent pays to read an answer: the tokens (o200k_base, GPT-4o's tokenizer) of the JSON
 * envelopes of the reads it makes most, on a small project shaped like real work. A count depends
 * on the answer alone (the random task ids move it by a few tokens), so
 * test/service/answer-tokens.test.ts holds `ready` to its budget with this.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArbeitService } from "../src/service/arbeit-service.js";
import type { Caller } from "../src/service/caller.js";
import { SqliteTaskStore } from "../src/store/sqlite/sqlite-task-store.js";
import { findTool } from "../src/tools/catalogue.js";
import { type Envelope, invokeTool } from "../src/tools/envelope.js";
import { countTokens } from "../test/helpers/tokenizer.js";

/** The most a 50-task `ready` answer may cost. */
export const READY_50_TOKEN_BUDGET = 1500;

export interface AnswerSizes {
  ready_50: number;
  tasks_50: number;
  task_get_full: number;
}

/** Titles of about six words, the length agents give tasks: an area and one of ten actions. */
const TITLES = [
  "Add retry to upload client",
  "Fix login redirect loop on Safari",
  "Cache parsed config between runs",
  "Document the export file format",
  "Migrate session store to Postgres",
  "Remove flaky timeout in search",
  "Show progress bar during import",
  "Validate invoice totals before saving",
  "Rename billing module to payments",
  "Split the parser in two",
] as const;
const TYPES = ["feature", "bug", "chore", null, "feature", null, "bug", "feature", null, "chore"] as const;
const PRIORITIES = [1, 2, 2, 3, 2, 2, 2, 2, 2, 2] as const;
const AREAS = ["api", "web", "cli", "docs", "db"] as const;

export interface AnswerProject {
  call(tool: string, args: unknown): Promise<Envelope<any>>;
  close(): Promise<void>;
}

/** A fresh SQLite project in a temporary directory, called through the tool catalogue. */
export async function openAnswerProject(): Promise<AnswerProject> {
  const dir = mkdtempSync(join(tmpdir(), "arbeit-answers-"));
  mkdirSync(join(dir, ".arbeit"));
  const clock = { at: Date.parse("2026-03-02T09:00:00.000Z") };
  const now = () => new Date(clock.at);
  const store = await SqliteTaskStore.open(join(dir, ".arbeit", "arbeit.db"), { clock: now });
  const service = new ArbeitService(store, { projectRoot: dir, now });
  const caller: Caller = { session: "ses-answers", agent: "claude" };
  return {
    call(tool, args) {
      clock.at += 1000;
      return invokeTool(findTool(tool)!, args, { caller, cwd: dir, service: async () => service });
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function ok(p: AnswerProject, tool: string, args: unknown): Promise<any> {
  const envelope = await p.call(tool, args);
  if (!envelope.success) throw new Error(`${tool} failed: ${JSON.stringify(envelope.error)}`);
  return envelope.data;
}

/**
 * Fifty ready tasks as a project holds them midway: most typed, one in ten urgent and one in ten
 * not, one in five under one of two epics, a few waiting on a blocker that is done, two claimed
 * by the caller. Plus one task in full, with its text fields filled, for task_get.
 */
export async function populateReadyProject(p: AnswerProject): Promise<{ fullTaskId: string }> {
  const filled = {
    intent: "Uploads over flaky networks fail and users lose their work.",
    description: "Retry failed chunk uploads with exponential backoff, up to five attempts.",
    plan: "Plan:\n- Wrap the chunk upload in a retry helper\n- Add tests with a fake clock\n- Document the setting",
  };
  const epics: string[] = [];
  for (const title of ["Reliable uploads for large files", "Billing overhaul for the new plans"])
    epics.push((await ok(p, "arbeit_task_create", { title, type: "epic", ...filled })).task.id);
  const done = (await ok(p, "arbeit_task_create", { title: "Agree on the retry policy", type: "chore", ...filled }))
    .task.id;
  let fullTaskId = "";
  for (let i = 0; i < 50; i++) {
    const k = i % 10;
    const type = TYPES[k];
    const title = `${AREAS[Math.floor(i / 10)]}: ${TITLES[k]}`;
    const args: Record<string, unknown> = { title, priority: PRIORITIES[k], ...(type ? { type, ...filled } : {}) };
    if (i % 5 === 0) args.parent_id = epics[(i / 5) % 2];
    if (i % 12 === 3) args.blocked_by = [done];
    const task = (await ok(p, "arbeit_task_create", args)).task;
    if (i === 0) fullTaskId = task.id;
    if (i === 7 || i === 23) await ok(p, "arbeit_task_claim", { task_id: task.id });
  }
  await ok(p, "arbeit_task_update", { task_id: done, status: "completed" });
  await ok(p, "arbeit_context_add", {
    task_id: fullTaskId,
    type: "decision",
    content: "Backoff starts at 200 ms and doubles; the fifth failure is reported to the user.",
  });
  return { fullTaskId };
}

const tokens = (envelope: Envelope<unknown>) => countTokens(JSON.stringify(envelope));

/** The sizes, in o200k tokens, of the answers on a project populateReadyProject filled. */
export async function measureAnswers(p: AnswerProject, fullTaskId: string): Promise<AnswerSizes> {
  const ready = await p.call("arbeit_query", { query: "ready", params: { limit: 50 } });
  const tasks = await p.call("arbeit_query", { query: "tasks", params: { limit: 50 } });
  const task = await p.call("arbeit_task_get", { task_id: fullTaskId });
  for (const envelope of [ready, tasks, task])
    if (!envelope.success) throw new Error(`a measured call failed: ${JSON.stringify(envelope)}`);
  return { ready_50: tokens(ready), tasks_50: tokens(tasks), task_get_full: tokens(task) };
}

export async function measureAnswerSizes(): Promise<AnswerSizes> {
  const p = await openAnswerProject();
  try {
    const { fullTaskId } = await populateReadyProject(p);
    return await measureAnswers(p, fullTaskId);
  } finally {
    await p.close();
  }
}
