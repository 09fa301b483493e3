import { Database } from "bun:sqlite";
import { type DriverMode, immutableUri, type SqlDriver, type SqlStatement, type SqlValue } from "./driver.js";

export function openBunDriver(path: string, mode: DriverMode = {}): SqlDriver {
  const db =
    mode.immutable || mode.readonly
      ? new Database(mode.immutable ? immutableUri(path) : path, { readonly: true })
      : new Database(path, { create: true });
  return {
    runtime: "bun",
    prepare(sql: string): SqlStatement {
      const statement = db.prepare(sql);
      return {
        run: (...params: SqlValue[]) => ({ changes: statement.run(...params).changes }),
        // bun:sqlite answers a missing row with null; the interface promises undefined.
        get: <T>(...params: SqlValue[]) => (statement.get(...params) ?? undefined) as T | undefined,
        all: <T>(...params: SqlValue[]) => statement.all(...params) as T[],
      };
    },
    exec: (sql: string) => {
      db.exec(sql);
    },
    backup: async (destination: string) => {
      db.prepare("VACUUM INTO ?").run(destination);
    },
    close: () => db.close(),
  };
}
