import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ARBEIT_DIR, DB_FILE } from "../domain/project-layout.js";

/**
 * Finding a project's store from a folder, with nothing but the file system: the start of every
 * command and hook, kept apart from the store and the service it opens (src/service/project.ts).
 */

export interface Location {
  /** The project root file paths are stored relative to. */
  root: string;
  /** The SQLite file. */
  dbPath: string;
}

export interface LocateOptions {
  cwd: string;
  /** --db / ARBEIT_DB: a database file to use instead of the discovered one. */
  db?: string | undefined;
  /**
   * A postgres:// URL (default: ARBEIT_DATABASE_URL): the tasks live there instead of in
   * `.arbeit/arbeit.db`; the project root is still the folder holding `.arbeit/`. `db` wins.
   */
  databaseUrl?: string | undefined;
  /** The Postgres schema (default: ARBEIT_DATABASE_SCHEMA, else "arbeit"). */
  databaseSchema?: string | undefined;
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The main worktree of the linked git worktree rooted at `dir`, or undefined when `dir` is not
 * one. A linked worktree's `.git` is a file, `gitdir: <main>/.git/worktrees/<name>`, and that
 * folder's `commondir` names the main repository's `.git` (relative to it). Read from the files
 * themselves: no git process on the start-up path.
 */
function mainWorktreeOf(dir: string): string | undefined {
  let pointer: string;
  try {
    if (!statSync(join(dir, ".git")).isFile()) return undefined;
    pointer = readFileSync(join(dir, ".git"), "utf8");
  } catch {
    return undefined;
  }
  const gitdir = /^gitdir:\s*(.+?)\s*$/m.exec(pointer)?.[1];
  if (!gitdir) return undefined;
  const worktreeGitDir = resolve(dir, gitdir);
  let common: string;
  try {
    // Only a regular file is read: a named pipe there would wait for a writer forever.
    if (!statSync(join(worktreeGitDir, "commondir")).isFile()) return undefined;
    common = resolve(worktreeGitDir, readFileSync(join(worktreeGitDir, "commondir"), "utf8").trim());
  } catch {
    return undefined;
  }
  // A bare repository has no main worktree to share a store from.
  return basename(common) === ".git" ? dirname(common) : undefined;
}

/** The root a database override belongs to: the parent of its `.arbeit/` folder, else the cwd. */
export function rootForDb(dbPath: string, cwd: string): string {
  const folder = dirname(dbPath);
  return folder.endsWith(`/${ARBEIT_DIR}`) || folder.endsWith(`\\${ARBEIT_DIR}`) ? dirname(folder) : cwd;
}

/**
 * The project's data, found like git finds its repository: the nearest ancestor of `cwd` holding
 * `.arbeit/`. In a linked git worktree (whose `.git` is a file pointing into the main
 * repository) without an `.arbeit/` of its own, the main worktree's is used, so agents working
 * side by side in worktrees of one repository share one store. The root stays the worktree's:
 * file paths are recorded relative to it, the same in every worktree.
 */
export function locate(options: LocateOptions): Location | undefined {
  const cwd = resolve(options.cwd);
  if (options.db) {
    const dbPath = resolve(cwd, options.db);
    return existsSync(dbPath) ? { root: rootForDb(dbPath, cwd), dbPath } : undefined;
  }
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (isDirectory(join(dir, ARBEIT_DIR))) return { root: dir, dbPath: join(dir, ARBEIT_DIR, DB_FILE) };
    const main = mainWorktreeOf(dir);
    if (main !== undefined && isDirectory(join(main, ARBEIT_DIR))) {
      return { root: dir, dbPath: join(main, ARBEIT_DIR, DB_FILE) };
    }
    if (dirname(dir) === dir) return undefined;
  }
}
