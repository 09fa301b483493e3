import { type BigIntStats, closeSync, openSync, readSync, statSync } from "node:fs";
import { ArbeitError } from "../../domain/errors.js";
import { rethrowAsStoreFailure } from "../store-errors.js";

/** Which file a store opened: a path deleted and made again names another (dev, inode). */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
}

/** What a path holds, in words, for a message: "a directory", "a named pipe (FIFO)", ... */
export function kindOf(stats: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isFile(): boolean;
}): string {
  if (stats.isFile()) return "a file";
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a named pipe (FIFO)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Refuses anything but a directory (or nothing) at `folder`, where a store's folder belongs: a
 * file or a pipe named `.arbeit` is no project, and making the folder there fails.
 */
export function checkStoreFolder(folder: string): void {
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(folder, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    rethrowAsStoreFailure(error, folder);
  }
  if (stats === undefined || stats.isDirectory()) return;
  const kind = kindOf(stats);
  throw new ArbeitError(
    "STORE_UNAVAILABLE",
    `${folder} is ${kind}, not a folder; Arbeit's store needs a folder there.`,
    {
      suggestions: [
        "Look at what is at that path: Arbeit keeps its store in a folder of that name and leaves anything else there alone.",
      ],
      details: { path: folder, cause: "not_a_directory", kind },
    },
  );
}

/**
 * What is at `path`, followed through symlinks: undefined when nothing is. Anything but a regular
 * file is refused before a driver opens it: opening a FIFO waits for a writer that never comes,
 * and a directory or device is no database either.
 */
export function databaseFileAt(path: string): FileIdentity | undefined {
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    rethrowAsStoreFailure(error, path);
  }
  if (stats === undefined) return undefined;
  if (!stats.isFile()) {
    const kind = kindOf(stats);
    throw new ArbeitError("STORE_UNAVAILABLE", `${path} is ${kind}, not an Arbeit database file.`, {
      suggestions: [
        "Point --db / ARBEIT_DB at the database file (a regular file, such as .arbeit/arbeit.db), or unset them to use the project's own.",
      ],
      details: { path, cause: "not_a_regular_file", kind },
    });
  }
  return { dev: stats.dev, ino: stats.ino };
}

export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

const SQLITE_HEADER = "SQLite format 3\0";

/**
 * A project's database file must be a database: an empty file (a crash while it was created, a
 * copy that failed) would otherwise become a new, empty store and hide what was lost. A missing
 * file is fine: it is created as a new store, as a first open always does.
 */
export function checkDatabaseFile(path: string): void {
  if (databaseFileAt(path) === undefined) return;
  let header: Buffer;
  try {
    const fd = openSync(path, "r");
    try {
      header = Buffer.alloc(16);
      header = header.subarray(0, readSync(fd, header, 0, 16, 0));
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    rethrowAsStoreFailure(error, path);
  }
  if (header.length === 0) {
    throw new ArbeitError(
      "STORE_DAMAGED",
      `The Arbeit database at ${path} is an empty file (0 bytes), not a database.`,
      {
        details: { path, cause: "empty_file" },
      },
    );
  }
  if (header.toString("latin1") !== SQLITE_HEADER) {
    throw new ArbeitError("STORE_DAMAGED", `The file at ${path} is not an SQLite database.`, {
      details: { path, cause: "not_a_database" },
    });
  }
}

/**
 * Makes an empty database file at `path` readable and writable by its owner only, unless one is
 * there already. A store holds token hashes and webhook signing secrets; SQLite would create the
 * file with the process's umask (often world-readable), and it gives the -wal and -shm files it
 * makes later the mode of the database file, so this covers those too.
 */
export function createOwnerOnlyFile(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}
