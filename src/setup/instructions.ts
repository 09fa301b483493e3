import type { TaskStatus } from "../domain/types.js";
import type { QueryName } from "../service/queries.js";
import { resume } from "../tools/agent-tools.js";
import { taskCreate, taskUpdate } from "../tools/task-tools.js";
import { contextAdd, init, progressAdd, progressComplete, query, startWork, stopWork } from "../tools/work-tools.js";

/**
 * The instructions setup writes into the file a host reads at the start of every session
 * (CLAUDE.md, AGENTS.md): when to reach for which tool. The host sends the file with every turn,
 * so the text stays a handful of lines (test/setup/snippet.test.ts holds it to a token budget).
 * Tool, query and status names are taken from their definitions, so a rename reaches the text.
 */

export const BLOCK_START = "<!-- arbeit:start -->";
export const BLOCK_END = "<!-- arbeit:end -->";

const READY: QueryName = "ready";
const COMPLETED: TaskStatus = "completed";

const code = (text: string) => `\`${text}\``;

export function instructionBlock(): string {
  return [
    BLOCK_START,
    "## Task memory (Arbeit)",
    "",
    "Tasks, decisions and progress live in Arbeit's `arbeit_*` tools and outlast this session.",
    "",
    `- Session start: ${code(resume.name)}; if it answers NOT_INITIALIZED, ${code(init.name)} once.`,
    `- Before real work: take a ready task (${code(query.name)} with query ${code(READY)}) or ` +
      `${code(taskCreate.name)} one with intent, description and plan, then ${code(startWork.name)}.`,
    `- As you go: ${code(contextAdd.name)} for each decision, dead end or blocker, with the reason; ` +
      `${code(progressAdd.name)} / ${code(progressComplete.name)} for steps.`,
    `- Done: ${code(taskUpdate.name)} status ${code(COMPLETED)}. Pausing: ${code(stopWork.name)}.`,
    BLOCK_END,
  ].join("\n");
}
