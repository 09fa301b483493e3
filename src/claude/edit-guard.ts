import { fromDirectory } from "../domain/paths.js";
import { checkEditStep, type GuardAnswer } from "../remote/edit-check.js";
import { row } from "../remote/step-input.js";
import { type HostStep, localRelative } from "../remote/steps.js";
import { shellWrittenPaths } from "./bash-writes.js";
import { type HookPayload, isRow, text } from "./hook-payload.js";
import type { HookAnswer } from "./hook-steps.js";

/**
 * Claude Code's PreToolUse hook on its file tools: before Write, Edit, MultiEdit, NotebookEdit
 * or a Bash command that plainly writes a file (src/claude/bash-writes.ts), it asks whether the
 * session may edit the file now (src/remote/edit-check.ts). A file another live session reserved
 * exclusively is denied, with the reason for the model; one reserved shared is allowed, with the
 * warning as context.
 */

const EDIT_TOOLS: Record<string, string> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

/** Tools whose calls are checked: PreToolUse's other calls (Arbeit's MCP tools) only leave a note. */
export const isEditTool = (tool: string | undefined) => tool !== undefined && (tool in EDIT_TOOLS || tool === "Bash");

/** The files the call would write, absolute (relative ones taken from the call's folder). */
export function editedPaths(payload: HookPayload, dir: string): string[] {
  if (!payload.tool_name || !isRow(payload.tool_input)) return [];
  const base = payload.cwd ?? dir;
  const field = EDIT_TOOLS[payload.tool_name];
  if (payload.tool_name === "Bash" && typeof payload.tool_input.command === "string")
    return shellWrittenPaths(payload.tool_input.command, base);
  const spelled = field ? [text(payload.tool_input[field])].filter((path) => path !== undefined) : [];
  return spelled.map((path) => fromDirectory(base, path));
}

/** The local part: the call's files relative to the project root; undefined when none lies in it. */
export function preToolUseInput(payload: HookPayload, dir: string, root: string): { paths: string[] } | undefined {
  const paths = editedPaths(payload, dir).flatMap((path) => localRelative(root, path) ?? []);
  return paths.length > 0 ? { paths: [...new Set(paths)] } : undefined;
}

/** What Claude Code reads from a PreToolUse hook: a denial with its reason, or a warning as context. */
export function preToolUseOutput(answer: GuardAnswer): HookAnswer {
  if (answer.decision === "allow" || !answer.reason) return { stdout: "" };
  const output =
    answer.decision === "deny"
      ? {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: `Arbeit: ${answer.reason}`,
        }
      : { hookEventName: "PreToolUse", additionalContext: `Arbeit: ${answer.reason}` };
  return { stdout: `${JSON.stringify({ hookSpecificOutput: output })}\n` };
}

/** The store step of the PreToolUse hook on file tools. */
export const preToolUse: HostStep<{ paths: string[] }, HookAnswer> = {
  name: "pre-tool-use",
  read: (input) => checkEditStep.read(row(input)),
  readOnly: "reads",
  run: async (service, input, caller, access) =>
    preToolUseOutput(await checkEditStep.run(service, input, caller, access)),
  outcome: (answer) => (answer.stdout.includes('"permissionDecision":"deny"') ? "edit_refused" : undefined),
};
