import {
  accessSync,
  constants,
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  type Stats,
  statSync,
} from "node:fs";
import { dirname, relative } from "node:path";
import { createdBySetup, forgetCreated } from "./created-files.js";
import { SetupError } from "./json-file.js";

/**
 * A text file's content, or undefined when there is no such file (or only a link to nowhere).
 * Anything but a regular file is refused before it is opened: reading a FIFO would wait forever
 * for a writer.
 */
export function readText(path: string): string | undefined {
  const kind = kindOf(path);
  // A link to nowhere holds nothing; writing through it is what checkWritable refuses.
  if (kind === undefined || kind.startsWith(BROKEN_LINK)) return undefined;
  if (kind !== FILE) throw new SetupError(notA(path, kind, FILE));
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new SetupError(`${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
}

const FILE = "a file";
const FOLDER = "a folder";
const BROKEN_LINK = "a symbolic link to";
const MISSING = "missing";

/** Why setup cannot use `path`, found to be `kind` where it needs `wanted`, and what to do. */
function notA(path: string, kind: string, wanted: string, consequence?: string): string {
  const so = consequence ? `, so ${consequence}` : "";
  if (kind === MISSING) return `${path} does not exist${so}; create it, then run again.`;
  if (kind.startsWith(BROKEN_LINK))
    return `${path} is ${kind}${so}; create what it points to or remove the link, then run again.`;
  return `${path} is ${kind}, not ${wanted}${so}; move it aside, then run again.`;
}

/**
 * What is at `path`, in words for a message, or undefined when nothing is (or it is unreachable).
 * A link is judged by what it points to; one that points nowhere, or round in a loop, is a kind
 * of its own, since writing through it fails half-way or makes a file where nobody asked.
 */
function kindOf(path: string): string | undefined {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return undefined;
  }
  if (stats.isSymbolicLink()) {
    try {
      stats = statSync(path);
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : "cannot be followed";
      return `${BROKEN_LINK} ${readlinkSync(path)}, which ${why}`;
    }
  }
  if (stats.isFile()) return FILE;
  if (stats.isDirectory()) return FOLDER;
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
  if (kind !== undefined && kind !== FILE) throw new SetupError(notA(path, kind, FILE));
  let folder = dirname(path);
  let existing = kind === FILE ? path : undefined;
  for (; existing === undefined; folder = dirname(folder)) {
    const folderKind = kindOf(folder);
    // Folders setup makes on the way, the project's own folder (`--dir`) included.
    if (folderKind === undefined && (folder === projectDir || isInside(folder, projectDir))) continue;
    if (folderKind !== FOLDER) {
      throw new SetupError(
        notA(folder, folderKind ?? MISSING, FOLDER, `setup cannot write ${relative(projectDir, path)}`),
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
