import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withArticle } from "../domain/article.js";
import { ArbeitError } from "../domain/errors.js";
import type { SqlDb, SqlStore, SqlValue } from "../store/sql/database.js";
import type { SqlDriver } from "../store/sqlite/driver.js";
import { applyMigrations, listMigrations } from "../store/sqlite/migrate.js";
import { openDriver } from "../store/sqlite/open-driver.js";
import { SqliteDb } from "../store/sqlite/sqlite-db.js";
import { type Counter, engineOf, isEmpty, quoteName, SEQUENCE_TABLE, type TableInfo } from "./engine.js";
import type { Progress } from "./export.js";
import {
  badExport,
  decodeCell,
  describeTable,
  type ExportHeader,
  type ExportRow,
  exportTables,
  parseHeader,
  tableRows,
} from "./export-format.js";

export interface ImportOptions {
  /** Delete everything in the store first (in the same transaction) instead of refusing. */
  replace?: boolean;
  onProgress?: Progress;
}

export interface ImportSummary {
  schema_version: number;
  /** The schema version the export was written at (older ones are migrated on the way in). */
  export_schema_version: number;
  rows: number;
  tables: Record<string, number>;
  replaced: boolean;
}

type Rows = AsyncIterable<ExportRow>;

/**
 * Loads an export into `store` (SQLite or Postgres), reproducing ids, sequence numbers and
 * timestamps exactly, in one transaction: a bad or truncated file leaves the store as it was. The
 * store must be empty unless `replace` is set. An export from an older schema is loaded into a
 * scratch SQLite database at its own version and migrated forward first, so the rows go through
 * the real migrations.
 */
export async function importStore(
  store: SqlStore,
  lines: AsyncIterable<string>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  const latest = listMigrations().length;
  const header = parseHeader(first.done ? undefined : first.value, latest);
  const rest: AsyncIterable<string> = { [Symbol.asyncIterator]: () => iterator };

  let source: { header: ExportHeader; rows: Rows };
  let scratch: { driver: SqlDriver; path: string } | undefined;
  if (header.schema_version < latest) {
    scratch = await migrateInScratch(header, rest, options.onProgress);
    const db = new SqliteDb(scratch.driver);
    source = { header: await scratchHeader(db, header), rows: allRows(db) };
  } else source = { header, rows: parseRows(rest) };

  try {
    const result = await store.transaction("write", async (db) => {
      const engine = engineOf(db);
      const empty = await isEmpty(db);
      if (!empty && !options.replace) {
        throw new ArbeitError(
          "INVALID_ARGUMENT",
          `The store at ${store.location} already holds data; import needs an empty one.`,
          {
            suggestions: [
              "Run `arbeit init` in a new folder and import there, or pass --replace to discard what is here.",
            ],
          },
        );
      }
      await engine.deferForeignKeys(db);
      if (!empty) await clearAll(db);
      const tables = await loadRows(db, source.header, source.rows, options.onProgress);
      await engine.analyze(db);
      return { tables, version: await engine.schemaVersion(db) };
    });
    return {
      schema_version: result.version,
      export_schema_version: header.schema_version,
      rows: Object.values(result.tables).reduce((sum, n) => sum + n, 0),
      tables: result.tables,
      replaced: options.replace === true,
    };
  } finally {
    if (scratch) {
      scratch.driver.close();
      rmSync(scratch.path, { force: true });
    }
  }
}

async function* parseRows(lines: AsyncIterable<string>): AsyncGenerator<ExportRow> {
  let number = 1;
  for await (const line of lines) {
    number++;
    if (line.trim() === "") continue;
    let row: ExportRow;
    try {
      row = JSON.parse(line) as ExportRow;
    } catch {
      throw badExport(`Line ${number} of the export is not valid JSON.`);
    }
    if (typeof row?.table !== "string" || typeof row.row !== "object" || row.row === null) {
      throw badExport(`Line ${number} of the export is not a row ({"table", "row"}).`);
    }
    yield row;
  }
}

/** Empties every table, children before the tables they point at. */
async function clearAll(db: SqlDb): Promise<void> {
  const tables = await engineOf(db).tables(db);
  for (const table of tables.reverse()) await db.run(`DELETE FROM ${quoteName(table.name)}`);
}

/**
 * Inserts every row, checks the counts against the header and the foreign keys, restores the
 * counters; returns the counts. Rows come back exactly as exported, including what triggers
 * derived when they were first written: the triggers are set aside while loading.
 */
async function loadRows(
  db: SqlDb,
  header: ExportHeader,
  rows: Rows,
  onProgress: Progress | undefined,
): Promise<Record<string, number>> {
  const engine = engineOf(db);
  const here = await engine.tables(db);
  const byName = new Map(here.map((table) => [table.name, table]));
  const declared = new Map(header.tables.map((table) => [table.name, table]));
  const inserts = new Map<string, { sql: string; columns: string[]; rowid: boolean }>();
  for (const table of header.tables) {
    if (table.name === SEQUENCE_TABLE) continue;
    const target = byName.get(table.name);
    if (!target || target.columns.join(",") !== table.columns.join(",")) {
      throw badExport(
        `The export's table ${table.name} (${table.columns.join(", ")}) does not match this schema${target ? ` (${target.columns.join(", ")})` : ""}.`,
      );
    }
    const columns = [...(table.rowid ? ["rowid"] : []), ...table.columns];
    inserts.set(table.name, {
      sql: `INSERT INTO ${quoteName(table.name)} (${columns.map(quoteName).join(", ")})
        VALUES (${columns.map(() => "?").join(", ")})`,
      columns: table.columns,
      rowid: table.rowid,
    });
  }
  const total = header.tables.reduce((sum, table) => sum + table.rows, 0);
  const counts: Record<string, number> = Object.fromEntries(header.tables.map((table) => [table.name, 0]));
  const counters: Counter[] = [];
  let done = 0;
  await engine.withoutTriggers(db, async () => {
    for await (const { table, rowid, row } of rows) {
      if (!declared.has(table)) throw badExport(`The export has rows for ${table}, which its header does not list.`);
      counts[table] = (counts[table] ?? 0) + 1;
      done++;
      if (done % 1000 === 0) onProgress?.(done, total);
      if (table === SEQUENCE_TABLE) {
        counters.push({ name: String(row.name), seq: Number(row.seq) });
        continue;
      }
      const insert = inserts.get(table)!;
      const values = insert.columns.map((column) => decodeCell(row[column] ?? null) as SqlValue);
      await db.run(insert.sql, ...(insert.rowid ? [rowid ?? null] : []), ...values);
    }
  });
  onProgress?.(done, total);
  for (const table of header.tables) {
    if (counts[table.name] !== table.rows) {
      throw badExport(
        `The export is incomplete: its header promises ${table.rows} row(s) of ${table.name}, the file holds ${counts[table.name]}.`,
      );
    }
  }
  await engine.restoreCounters(db, counters, here);
  const broken = await engine.foreignKeyProblems(db);
  if (broken.length > 0) {
    const first = broken[0]!;
    throw badExport(
      `The export breaks ${broken.length} foreign key(s), e.g. ${withArticle(first.table)} row pointing at a missing ${first.parent} row.`,
    );
  }
  return counts;
}

/** Loads an older export into a scratch file at its own schema version, then migrates it. */
async function migrateInScratch(
  header: ExportHeader,
  lines: AsyncIterable<string>,
  onProgress: Progress | undefined,
): Promise<{ driver: SqlDriver; path: string }> {
  const path = join(tmpdir(), `arbeit-import-${process.pid}-${Date.now()}.db`);
  const driver = await openDriver(path);
  try {
    driver.exec("PRAGMA foreign_keys = ON");
    driver.exec("BEGIN IMMEDIATE");
    applyMigrations(driver, listMigrations().slice(0, header.schema_version));
    const db = new SqliteDb(driver);
    await engineOf(db).deferForeignKeys(db);
    await loadRows(db, header, parseRows(lines), onProgress);
    applyMigrations(driver);
    driver.exec("COMMIT");
    return { driver, path };
  } catch (error) {
    driver.close();
    rmSync(path, { force: true });
    throw error;
  }
}

async function scratchHeader(db: SqlDb, original: ExportHeader): Promise<ExportHeader> {
  return {
    ...original,
    schema_version: await engineOf(db).schemaVersion(db),
    tables: (await exportTables(db)).map(describeTable),
  };
}

async function* allRows(db: SqlDb): AsyncGenerator<ExportRow> {
  for (const table of await exportTables(db)) yield* tableRows(db, table as TableInfo);
}
