import { existsSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { openDriver } from "../store/sqlite/driver.js";
import { schemaVersion } from "../store/sqlite/migrate.js";
import type { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";

export interface BackupSummary {
  path: string;
  bytes: number;
  schema_version: number;
  integrity: "ok";
}

/**
 * Copies the store to `destination` with SQLite's online backup (VACUUM INTO under Bun): a
 * consistent snapshot taken while agents keep writing. The copy is written beside the target
 * and renamed into place only after it passes integrity_check, so a half-written file never
 * carries the target's name. An existing file is never overwritten.
 */
export async function backupStore(store: SqliteTaskStore, destination: string): Promise<BackupSummary> {
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
  const partial = `${destination}.partial-${process.pid}`;
  try {
    await store.backup(partial);
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
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${partial}${suffix}`, { force: true });
  }
}
