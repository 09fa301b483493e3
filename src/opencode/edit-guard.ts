import { shellWrittenPaths } from "../claude/bash-writes.js";
import { fromDirectory } from "../domain/paths.js";
import { isRow } from "./file-touches.js";

/**
 * The files an OpenCode tool call is about to write, read from its arguments before it runs, so
 * the plugin can refuse an edit of a file another session reserved exclusively
 * (src/remote/edit-check.ts): `write`, `edit` and `multiedit` name `filePath`; `apply_patch`
 * names its files in the patch (`*** Add File:`, `*** Update File:`, `*** Delete File:`, `***
 * Move to:`); `bash` is read like Claude Code's (src/claude/bash-writes.ts). Absolute paths;
 * relative ones are taken from `directory` (a bash call's `workdir`, when it names one).
 */
export function pathsBeforeToolCall(tool: string, args: unknown, directory: string): string[] {
  if (!isRow(args)) return [];
  const at = (path: string) => fromDirectory(directory, path);
  if (tool === "write" || tool === "edit" || tool === "multiedit")
    return typeof args.filePath === "string" && args.filePath !== "" ? [at(args.filePath)] : [];
  if (tool === "apply_patch" && typeof args.patchText === "string") {
    const files = [...args.patchText.matchAll(/^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm)];
    return files.map((match) => at(match[1]!.trim()));
  }
  if (tool === "bash" && typeof args.command === "string") {
    const folder = typeof args.workdir === "string" && args.workdir !== "" ? at(args.workdir) : directory;
    return shellWrittenPaths(args.command, folder);
  }
  return [];
}

/** Thrown from `tool.execute.before` to refuse a call: OpenCode hands its message to the model. */
export class ReservedFileError extends Error {
  override name = "ReservedFileError";
}
