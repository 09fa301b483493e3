import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ARBEIT_DIR } from "../domain/project-layout.js";

/**
 * The files and folders setup created in a project, so that `--remove` deletes those and nothing
 * else: a file the user had (even one holding only Arbeit's entries) is emptied, never deleted.
 * Kept in `.arbeit/`, which stays on this machine: a teammate whose clone has the committed
 * files did not create them. Each path is kept with its inode, so a file the user deleted and
 * wrote again by the same name is theirs.
 */

const RECORD = join(ARBEIT_DIR, "setup-created.json");

type Created = Record<string, number>;

function load(dir: string): Created {
  try {
    const value = JSON.parse(readFileSync(join(dir, RECORD), "utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

function save(dir: string, created: Created): void {
  // No .arbeit/ (a store elsewhere): nothing to keep the record in, and setup does not make one.
  if (!existsSync(join(dir, ARBEIT_DIR))) return;
  writeFileSync(join(dir, RECORD), `${JSON.stringify(created, null, 2)}\n`);
}

const inode = (path: string) => {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
};

/** `path` and the folders above it, inside `dir`, that do not exist yet: what writing it creates. */
export function toBeCreated(dir: string, path: string): string[] {
  const missing: string[] = [];
  for (let at = path; relative(dir, at) !== "" && !relative(dir, at).startsWith(".."); at = dirname(at)) {
    if (existsSync(at)) break;
    missing.push(at);
  }
  return missing;
}

/** Notes that setup created `paths` (absolute), as they stand now. */
export function rememberCreated(dir: string, paths: string[]): void {
  if (paths.length === 0) return;
  const created = load(dir);
  for (const path of paths) {
    const ino = inode(path);
    if (ino !== undefined) created[relative(dir, path)] = ino;
  }
  save(dir, created);
}

/** True when setup created the file or folder at `path` and it is still that one. */
export function createdBySetup(dir: string, path: string): boolean {
  const ino = load(dir)[relative(dir, path)];
  return ino !== undefined && ino === inode(path);
}

/** Drops deleted paths from the record. */
export function forgetCreated(dir: string, paths: string[]): void {
  const created = load(dir);
  const before = Object.keys(created).length;
  for (const path of paths) delete created[relative(dir, path)];
  if (Object.keys(created).length !== before) save(dir, created);
}
