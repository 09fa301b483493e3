import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import type { SqlDriver, SqlStatement, SqlValue } from "./driver.js";

/**
 * Where the compiled addon is, when it sits in the usual place. better-sqlite3 otherwise finds it
 * through the `bindings` package, which probes a dozen paths on every start: a large share of
 * the CLI's start-up. Absent (an unusual install), the default search is used.
 */
function addonPath(): string | undefined {
  try {
    const root = dirname(createRequire(import.meta.url).resolve("better-sqlite3/package.json"));
    const addon = join(root, "build", "Release", "better_sqlite3.node");
    return existsSync(addon) ? addon : undefined;
  } catch {
    return undefined;
  }
}

export function openNodeDriver(path: string): SqlDriver {
  const addon = addonPath();
  const db = addon === undefined ? new Database(path) : new Database(path, { nativeBinding: addon });

  return {
    runtime: "node",
    prepare(sql: string): SqlStatement {
      const statement = db.prepare(sql);
      return {
        run: (...params: SqlValue[]) => ({ changes: statement.run(...params).changes }),
        get: <T>(...params: SqlValue[]) => statement.get(...params) as T | undefined,
        all: <T>(...params: SqlValue[]) => statement.all(...params) as T[],
      };
    },
    exec: (sql: string) => {
      db.exec(sql);
    },
    // One step copies every page under a single read lock, so the copy is one snapshot and a
    // writer in another process cannot make the backup restart.
    backup: async (destination: string) => {
      await db.backup(destination, { progress: () => 0x7fffffff });
    },
    close: () => db.close(),
  };
}
