import { commitMade } from "../service/git-commit.js";
import { type HookPayload, isRow, text } from "./hook-payload.js";

/** The commit a Claude Code Bash call made (see commitMade), from its PostToolUse payload. */
export function committedSha(payload: HookPayload): string | undefined {
  if (payload.tool_name !== "Bash" || !isRow(payload.tool_input) || !isRow(payload.tool_response)) return undefined;
  const command = text(payload.tool_input.command);
  if (!command) return undefined;
  const stdout = text(payload.tool_response.stdout) ?? "";
  const stderr = text(payload.tool_response.stderr) ?? "";
  return commitMade({
    command,
    output: stderr ? `${stdout}\n${stderr}` : stdout,
    interrupted: payload.tool_response.interrupted === true,
  });
}
