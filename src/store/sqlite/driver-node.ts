import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { type DriverMode, immutableUri, type SqlDriver, type SqlStatement, type SqlValue } from "./driver.js";

/**
 * Where the compiled addon is, when it sits in the usual place. better-sqlite3 otherwise finds it
 * through the `bindings` package, which probes a dozen paths on every start: a large share of
 * the CLI's start-up. The package is looked for in the node_modules folders above this file, as
 * Node resolves a package, without loading node:module (which costs a call milliseconds). Absent
 * (an unusual install), the default search is used.
 */
function addonPath(): string | undefined {
  try {
    for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
      const addon = join(dir, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");
      if (existsSync(addon)) return addon;
      if (dirname(dir) === dir) return undefined;
    }
  } catch {
    return undefined;
  }
}

/**
 * better-sqlite3 reads SQLITE_USE_URI once, when its addon loads (at the first open): set for that
 * moment only, so an immutable open can pass its URI. Our paths are always absolute, so no
 * ordinary path starts with "file:" and is taken for a URI.
 */
function newDatabase(filename: string, options: Database.Options): Database.Database {
  const before = process.env.SQLITE_USE_URI;
  process.env.SQLITE_USE_URI = "1";
  try {
    return new Database(filename, options);
  } finally {
    if (before === undefined) delete process.env.SQLITE_USE_URI;
    else process.env.SQLITE_USE_URI = before;
  }
}

export function openNodeDriver(path: string, mode: DriverMode = {}): SqlDriver {
  const addon = addonPath();
  const options: Database.Options = { readonly: mode.readonly === true || mode.immutable === true };
  if (addon !== undefined) options.nativeBinding = addon;
  const db = newDatabase(mode.immutable ? immutableUri(path) : path, options);

  return {
    runtime: "node",
    prepare(sql: string): SqlStatement {
      const statement = db.prepare(sql);
      return {
        run: (...params: SqlValue[]) => ({ changes: statement.run(...params).changes }),
        get: <T>(...params: SqlValue[]) => statement.get(...params) as T | undefined,
        all: <T>(...params: SqlValue[]) => statement.all(...params) as T[],
        // raw() is a mode of the statement: set for this read only, so all() and get() keep objects.
        values: (...params: SqlValue[]) => {
          statement.raw(true);
          try {
            return statement.all(...params) as unknown[][];
          } finally {
            statement.raw(false);
          }
        },
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
