import Database from "better-sqlite3";
import type { SqlDriver, SqlStatement, SqlValue } from "./driver.js";

export function openNodeDriver(path: string): SqlDriver {
  const db = new Database(path);
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
