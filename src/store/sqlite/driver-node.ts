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
    close: () => db.close(),
  };
}
