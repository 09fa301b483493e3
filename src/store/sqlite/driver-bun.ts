import { Database } from "bun:sqlite";
import { type DriverMode, immutableUri, type SqlDriver, type SqlStatement, type SqlValue } from "./driver.js";

export function openBunDriver(path: string, mode: DriverMode = {}): SqlDriver {
  const db =
    mode.immutable || mode.readonly
      ? new Database(mode.immutable ? immutableUri(path) : path, { readonly: true })
      : new Database(path, { create: true });
  // The rows the statement itself changed, as SQLite's changes() counts them. Some Bun releases
  // (1.3, which OpenCode embeds) answer run() with the rows triggers changed too: an insert
  // whose trigger writes a row reports 2, and a caller expecting 1 takes it for a failure.
  const changed = db.prepare("SELECT changes() AS n");
  const changes = () => (changed.get() as { n: number }).n;
  return {
    runtime: "bun",
    prepare(sql: string): SqlStatement {
      const statement = db.prepare(sql);
      return {
        run: (...params: SqlValue[]) => {
          statement.run(...params);
          return { changes: changes() };
        },
        // bun:sqlite answers a missing row with null; the interface promises undefined.
        get: <T>(...params: SqlValue[]) => (statement.get(...params) ?? undefined) as T | undefined,
        all: <T>(...params: SqlValue[]) => statement.all(...params) as T[],
        values: (...params: SqlValue[]) => statement.values(...params) as unknown[][],
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
