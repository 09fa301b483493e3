import { commitMade } from "../service/git-commit.js";
import { isRow } from "./file-touches.js";

/**
 * The commit an OpenCode `bash` call made, from `tool.execute.after`: the command is in the
 * call's args, and what it printed in the output (stdout and stderr together) or its metadata.
 */
export function commitOfToolCall(tool: string, args: unknown, output: unknown): string | undefined {
  if (tool !== "bash" || !isRow(args) || typeof args.command !== "string") return undefined;
  const printed = isRow(output)
    ? typeof output.output === "string"
      ? output.output
      : isRow(output.metadata) && typeof output.metadata.output === "string"
        ? output.metadata.output
        : ""
    : "";
  // OpenCode's bash tool reports the exit code in its metadata: a failed command made no commit.
  const exit = isRow(output) && isRow(output.metadata) ? output.metadata.exit : undefined;
  return commitMade({ command: args.command, output: printed, failed: typeof exit === "number" && exit !== 0 });
}
