import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { SERVICE_FILE } from "../domain/project-layout.js";
import type { TaskStatus } from "../domain/types.js";
import { locate } from "../service/locate.js";
import type { QueryName } from "../service/queries.js";
import { readStoreRecord } from "../store/store-record.js";
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

/**
 * Which block a project gets: "service" when its tasks are behind an `arbeit serve` service
 * (`.arbeit/service.json`, or an older checkout's record), where a clone must log in and never
 * make a store of its own; else "local", which makes its store once.
 */
export type InstructionKind = "local" | "service";

export function instructionKind(root: string): InstructionKind {
  const location = locate({ cwd: root });
  if (location === undefined) return "local";
  const folder = dirname(location.dbPath);
  try {
    return readStoreRecord(folder)?.store === "service" ? "service" : "local";
  } catch {
    // A damaged service file still says which kind of project this is.
    return existsSync(join(folder, SERVICE_FILE)) ? "service" : "local";
  }
}

const SESSION_START: Record<InstructionKind, string> = {
  local: `- Session start: ${code(resume.name)}; if it answers NOT_INITIALIZED, ${code(init.name)} once.`,
  service:
    `- Session start: ${code(resume.name)}. The tasks are on the team's Arbeit service: never ${code(init.name)}; ` +
    "if a call answers UNAUTHORIZED, ask the person to run the `arbeit login` it names.",
};

export function instructionBlock(kind: InstructionKind = "local"): string {
  return [
    BLOCK_START,
    "## Task memory (Arbeit)",
    "",
    "Tasks, decisions and progress live in Arbeit's `arbeit_*` tools and outlast this session.",
    "",
    SESSION_START[kind],
    `- Before real work: take a ready task (${code(query.name)} with query ${code(READY)}) or ` +
      `${code(taskCreate.name)} one with intent, description and plan, then ${code(startWork.name)}.`,
    `- As you go: ${code(contextAdd.name)} for each decision, dead end or blocker, with the reason; ` +
      `${code(progressAdd.name)} / ${code(progressComplete.name)} for steps.`,
    `- Done: ${code(taskUpdate.name)} status ${code(COMPLETED)}. Pausing: ${code(stopWork.name)}.`,
    BLOCK_END,
  ].join("\n");
}
