import { randomBytes } from "node:crypto";
import { closeSync, createReadStream, existsSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { ArbeitError } from "../domain/errors.js";
import { schemaVersion } from "../store/sqlite/migrate.js";
import { openDriver } from "../store/sqlite/open-driver.js";
import { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";
import type { MaintainedStore } from "./doctor.js";
import { exportStore } from "./export.js";
import { importStore } from "./import.js";

export interface BackupSummary {
  path: string;
  bytes: number;
  schema_version: number;
  integrity: "ok";
}

/**
 * Copies the store to `destination`, a new SQLite database file, from one consistent snapshot
 * taken while agents keep writing: SQLite's online backup (VACUUM INTO under Bun) for a SQLite
 * store; for a Postgres store, its snapshot exported and imported into the new file, so a backup
 * is the same kind of file from either engine (and `arbeit --db <file>` can open it). The copy is
 * written beside the target and renamed into place only after it passes integrity_check, so a
 * half-written file never carries the target's name. An existing file is never overwritten.
 */
export async function backupStore(store: MaintainedStore, destination: string): Promise<BackupSummary> {
  if (existsSync(destination)) {
    throw new ArbeitError("INVALID_ARGUMENT", `${destination} already exists; a backup never overwrites a file.`, {
      suggestions: ["Name a new file, or move the old one away first."],
    });
  }
  if (!existsSync(dirname(destination))) {
    throw new ArbeitError("INVALID_ARGUMENT", `The folder ${dirname(destination)} does not exist.`, {
      suggestions: ["Create the folder first, or name a file in an existing one."],
    });
  }
  // The target's folder may be one others write to (/tmp): a name they cannot guess, created only
  // where nothing is, so a symlink planted there never has the copy written through it.
  const partial = `${destination}.partial-${process.pid}-${randomBytes(8).toString("hex")}`;
  try {
    // The copy holds what the store holds (token hashes, webhook secrets): its owner's alone.
    closeSync(openSync(partial, "wx", 0o600));
    if (store instanceof SqliteTaskStore) await store.backup(partial);
    else await copyIntoSqlite(store, partial);
    const copy = await openDriver(partial);
    let version: number;
    try {
      const result = copy.prepare("PRAGMA integrity_check").all<{ integrity_check: string }>();
      if (result.length !== 1 || result[0]!.integrity_check !== "ok") {
        throw new ArbeitError("INTERNAL_ERROR", `The backup failed integrity_check: ${JSON.stringify(result)}.`);
      }
      version = schemaVersion(copy);
      // A WAL-mode copy would need its -wal file beside it; one self-contained file is easier to keep.
      copy.exec("PRAGMA journal_mode = DELETE");
    } finally {
      copy.close();
    }
    renameSync(partial, destination);
    return { path: destination, bytes: statSync(destination).size, schema_version: version, integrity: "ok" };
  } finally {
    for (const suffix of ["", "-wal", "-shm", "-journal", ".jsonl"]) rmSync(`${partial}${suffix}`, { force: true });
  }
}

/** Writes the store's snapshot into a new SQLite file at `path`, by way of an export beside it. */
async function copyIntoSqlite(store: MaintainedStore, path: string): Promise<void> {
  const lines = `${path}.jsonl`;
  const fd = openSync(lines, "wx", 0o600);
  try {
    await exportStore(store, (chunk) => void writeSync(fd, chunk), { credentials: true });
  } finally {
    closeSync(fd);
  }
  const copy = await SqliteTaskStore.open(path);
  try {
    // A backup is this store as it is: claims, work in progress, tokens and webhooks included.
    await importStore(copy, createInterface({ input: createReadStream(lines), crlfDelay: Number.POSITIVE_INFINITY }), {
      keepClaims: true,
      credentials: true,
    });
  } finally {
    await copy.close();
  }
}
