import { fromDirectory } from "../domain/paths.js";
import type { FileOperation } from "../domain/types.js";

/** A file a host tool read or wrote, as an absolute path, ready for ArbeitService.trackFile. */
export interface FileTouch {
  path: string;
  operation: FileOperation;
}

/** OpenCode's built-in tools that name one file in `args.filePath`. */
const FILE_PATH_TOOLS: Record<string, FileOperation> = {
  read: "read",
  write: "write",
  edit: "write",
  multiedit: "write",
};

type Row = Record<string, unknown>;

export const isRow = (value: unknown): value is Row => typeof value === "object" && value !== null;
const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.length > 0;

/**
 * OpenCode resolves a relative filePath against the session's directory; so do we, leaving its
 * `..` for trackFile to apply after it has followed symlinks.
 */
function absolute(directory: string, path: string): string {
  return fromDirectory(directory, path);
}

/**
 * The files one finished OpenCode tool call touched, from `tool.execute.after`'s input args and
 * output metadata. apply_patch reports its files in `metadata.files[]` (a move touches both the
 * old `filePath` and the new `movePath`; a delete is a write). Anything else touches nothing.
 */
export function touchesFromToolCall(tool: string, args: unknown, metadata: unknown, directory: string): FileTouch[] {
  // Own keys only: a tool named constructor or toString is no file tool.
  const operation = Object.hasOwn(FILE_PATH_TOOLS, tool) ? FILE_PATH_TOOLS[tool] : undefined;
  if (operation) {
    const path = isRow(args) ? args.filePath : undefined;
    return nonEmpty(path) ? [{ path: absolute(directory, path), operation }] : [];
  }
  if (tool !== "apply_patch" || !isRow(metadata) || !Array.isArray(metadata.files)) return [];
  const touches: FileTouch[] = [];
  for (const file of metadata.files) {
    if (!isRow(file)) continue;
    for (const path of [file.filePath, file.movePath]) {
      if (nonEmpty(path)) touches.push({ path: absolute(directory, path), operation: "write" });
    }
  }
  return touches;
}

/** The `file.edited` event names the file only; the session comes from SessionActivity. */
export function touchFromFileEdited(properties: unknown, directory: string): FileTouch | undefined {
  const file = isRow(properties) ? properties.file : undefined;
  return nonEmpty(file) ? { path: absolute(directory, file), operation: "write" } : undefined;
}
