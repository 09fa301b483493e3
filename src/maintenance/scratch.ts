import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The scratch database an import migrates an older export in. It holds a copy of everything in
 * the export, so it is created for its owner only (0600, never over an existing file) beside the
 * store, or in a private folder (0700) in the temp folder; and it lives no longer than the
 * import: removed when the import ends, when the process is stopped with SIGINT or SIGTERM, at
 * exit, and, left by a process killed outright, by the next import that looks in the same place.
 * Its name, `arbeit-import-<pid>-<random>`, says whose it was.
 */
export const SCRATCH_PREFIX = "arbeit-import-";

const SIDE_FILES = ["", "-journal", "-wal", "-shm"];
const OWNER = new RegExp(`^${SCRATCH_PREFIX}(\\d+)-`);
const SIGNALS = ["SIGINT", "SIGTERM"] as const;

export interface Scratch {
  path: string;
  /** Closes what `onRemove` names and removes every file of the scratch database. Idempotent. */
  remove(): void;
  /** Run just before the files go: close the database that has them open. */
  onRemove(close: () => void): void;
}

const live = new Set<Scratch>();

/** Creates a scratch database file in `dir` (beside the store) when given, else in the temp folder. */
export function createScratch(dir: string | undefined): Scratch {
  if (dir !== undefined) {
    removeStale(dir);
    try {
      const path = join(dir, `${SCRATCH_PREFIX}${process.pid}-${randomBytes(6).toString("hex")}.db`);
      createPrivate(path);
      return register(path);
    } catch {
      // A folder we may not write to: the temp folder will do, in a private folder of its own.
    }
  }
  removeStale(tmpdir());
  const folder = mkdtempSync(join(tmpdir(), `${SCRATCH_PREFIX}${process.pid}-`));
  const path = join(folder, "scratch.db");
  try {
    createPrivate(path);
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return register(path, folder);
}

function createPrivate(path: string): void {
  // SQLite gives its journal the database file's permissions, so these cover it too.
  closeSync(openSync(path, "wx", 0o600));
}

function register(path: string, folder?: string): Scratch {
  const closers: Array<() => void> = [];
  let removed = false;
  const scratch: Scratch = {
    path,
    onRemove: (close) => void closers.push(close),
    remove() {
      if (removed) return;
      removed = true;
      for (const close of closers.splice(0)) {
        try {
          close();
        } catch {
          // Already closed, or closing failed: the files go all the same.
        }
      }
      for (const suffix of SIDE_FILES) rmSync(`${path}${suffix}`, { force: true });
      if (folder) rmSync(folder, { recursive: true, force: true });
      live.delete(scratch);
      if (live.size === 0) unwatch();
    },
  };
  if (live.size === 0) watch();
  live.add(scratch);
  return scratch;
}

function removeAll(): void {
  for (const scratch of [...live]) scratch.remove();
}

function onSignal(signal: NodeJS.Signals): void {
  removeAll();
  // Raised again with our handler gone: the process ends as the signal would have ended it, or
  // carries on if something else in it has chosen to handle the signal.
  unwatch();
  process.kill(process.pid, signal);
}

function watch(): void {
  for (const signal of SIGNALS) process.on(signal, onSignal);
  process.on("exit", removeAll);
}

function unwatch(): void {
  for (const signal of SIGNALS) process.off(signal, onSignal);
  process.off("exit", removeAll);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, it is someone else's.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes scratch files and folders in `dir` whose process is gone (killed before it could tidy up). */
function removeStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(SCRATCH_PREFIX)) continue;
    const pid = Number(OWNER.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || isRunning(pid)) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
    } catch {
      // Someone else's, or already gone: not ours to insist on.
    }
  }
}
