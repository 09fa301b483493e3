import { accessSync, constants, readdirSync, readFileSync, rmdirSync, rmSync, type Stats, statSync } from "node:fs";
import { dirname, relative } from "node:path";
import { createdBySetup, forgetCreated } from "./created-files.js";
import { SetupError } from "./json-file.js";

/**
 * A text file's content, or undefined when there is no such file. Anything but a regular file is
 * refused before it is opened: reading a FIFO would wait forever for a writer.
 */
export function readText(path: string): string | undefined {
  const kind = kindOf(path);
  if (kind === undefined) return undefined;
  if (kind !== FILE) throw new SetupError(`${path} is ${kind}, not a file; move it aside, then run again.`);
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new SetupError(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
}

const FILE = "a file";

/** What is at `path`, in words for a message, or undefined when nothing is (or it is unreachable). */
function kindOf(path: string): string | undefined {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch {
    return undefined;
  }
  if (stats.isFile()) return FILE;
  if (stats.isDirectory()) return "a folder";
  if (stats.isFIFO()) return "a named pipe (FIFO)";
  if (stats.isSocket()) return "a socket";
  return "a device";
}

/**
 * Refuses, before any file is written, a file setup would write that it cannot: a folder, a pipe
 * or a device by that name, a file where a folder on its path should be (`.claude` a file), or no
 * permission to write it (or, when it does not exist yet, the folder it goes in). So setup either
 * writes every file of its plan or none.
 */
export function checkWritable(path: string, projectDir: string): void {
  const kind = kindOf(path);
  if (kind !== undefined && kind !== FILE) {
    throw new SetupError(`${path} is ${kind}, not a file; move it aside, then run again.`);
  }
  let folder = dirname(path);
  let existing = kind === FILE ? path : undefined;
  for (; existing === undefined; folder = dirname(folder)) {
    const folderKind = kindOf(folder);
    // Folders setup makes on the way, the project's own folder (`--dir`) included.
    if (folderKind === undefined && (folder === projectDir || isInside(folder, projectDir))) continue;
    if (folderKind !== "a folder") {
      throw new SetupError(
        `${folder} is ${folderKind ?? "missing"}, not a folder, so setup cannot write ${relative(projectDir, path)}; move it aside, then run again.`,
      );
    }
    existing = folder;
  }
  try {
    accessSync(existing, constants.W_OK);
  } catch {
    throw new SetupError(
      `${existing} cannot be written (permission denied), so setup cannot write ${relative(projectDir, path)}.`,
    );
  }
}

/**
 * Deletes a file setup is taking out when setup created it (`proven`: its content shows setup
 * wrote it), then the folders setup created for it (`.claude/`, `.opencode/plugin/`) that it
 * leaves empty. False when the file is the user's: it stays.
 */
export function removeFile(path: string, projectDir: string, proven = false): boolean {
  if (!proven && !createdBySetup(projectDir, path)) return false;
  rmSync(path, { force: true });
  const gone = [path];
  for (let folder = dirname(path); isInside(folder, projectDir); folder = dirname(folder)) {
    if (!createdBySetup(projectDir, folder) || readdirSync(folder).length > 0) break;
    rmdirSync(folder);
    gone.push(folder);
  }
  forgetCreated(projectDir, gone);
  return true;
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith("/");
}
