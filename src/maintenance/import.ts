import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { openDriver, type SqlDriver, type SqlStatement } from "../store/sqlite/driver.js";
import { applyMigrations, listMigrations, schemaVersion } from "../store/sqlite/migrate.js";
import type { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";
import type { Progress } from "./export.js";
import {
  badExport,
  decodeCell,
  describeTable,
  type ExportHeader,
  type ExportRow,
  type ExportTable,
  exportTables,
  parseHeader,
  tableRows,
} from "./export-format.js";
import { hasSequenceTable, isEmpty, quoteName, SEQUENCE_TABLE, userTables } from "./tables.js";

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

/**
 * Loads an export into `store`, reproducing ids, sequence numbers and timestamps exactly, in one
 * transaction: a bad or truncated file leaves the store as it was. The store must be empty
 * unless `replace` is set. An export from an older schema is loaded into a scratch database at
 * its own version and migrated forward first, so the rows go through the real migrations.
 */
export async function importStore(
  store: SqliteTaskStore,
  lines: AsyncIterable<string>,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  const latest = listMigrations().length;
  const header = parseHeader(first.done ? undefined : first.value, latest);
  const rest: AsyncIterable<string> = { [Symbol.asyncIterator]: () => iterator };

  let source: { header: ExportHeader; rows: AsyncIterable<ExportRow> | Iterable<ExportRow> };
  let scratch: { driver: SqlDriver; path: string } | undefined;
  if (header.schema_version < latest) {
    scratch = await migrateInScratch(header, rest, options.onProgress);
    source = { header: scratchHeader(scratch.driver, header), rows: allRows(scratch.driver) };
  } else source = { header, rows: parseRows(rest) };

  try {
    const driver = store.driver;
    const tables = await store.write(async () => {
      const empty = isEmpty(driver);
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
      driver.exec("PRAGMA defer_foreign_keys = ON");
      if (!empty) clearAll(driver);
      return loadRows(driver, source.header, source.rows, options.onProgress);
    });
    return {
      schema_version: schemaVersion(driver),
      export_schema_version: header.schema_version,
      rows: Object.values(tables).reduce((sum, n) => sum + n, 0),
      tables,
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

function clearAll(driver: SqlDriver): void {
  for (const table of userTables(driver)) driver.exec(`DELETE FROM ${quoteName(table.name)}`);
  if (hasSequenceTable(driver)) driver.exec(`DELETE FROM ${SEQUENCE_TABLE}`);
}

/** Inserts every row, checks the counts against the header and the foreign keys; returns counts. */
async function loadRows(
  driver: SqlDriver,
  header: ExportHeader,
  rows: AsyncIterable<ExportRow> | Iterable<ExportRow>,
  onProgress: Progress | undefined,
): Promise<Record<string, number>> {
  const here = new Map(userTables(driver).map((table) => [table.name, table]));
  const declared = new Map(header.tables.map((table) => [table.name, table]));
  const inserts = new Map<string, { statement: SqlStatement; table: ExportTable }>();
  for (const table of header.tables) {
    if (table.name === SEQUENCE_TABLE) continue;
    const target = here.get(table.name);
    if (!target || target.columns.join(",") !== table.columns.join(",")) {
      throw badExport(
        `The export's table ${table.name} (${table.columns.join(", ")}) does not match this schema${target ? ` (${target.columns.join(", ")})` : ""}.`,
      );
    }
    const columns = [...(table.rowid ? ["rowid"] : []), ...table.columns];
    const sql = `INSERT INTO ${quoteName(table.name)} (${columns.map(quoteName).join(", ")})
      VALUES (${columns.map(() => "?").join(", ")})`;
    inserts.set(table.name, { statement: driver.prepare(sql), table });
  }
  // Rows come back exactly as exported, including what triggers derived when they were first
  // written; the triggers are set aside while loading and restored (same transaction) after.
  const triggers = driver
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
    .all<{ name: string; sql: string }>();
  for (const trigger of triggers) driver.exec(`DROP TRIGGER ${quoteName(trigger.name)}`);
  const total = header.tables.reduce((sum, table) => sum + table.rows, 0);
  const counts: Record<string, number> = Object.fromEntries(header.tables.map((table) => [table.name, 0]));
  const sequences: Array<{ name: string; seq: number }> = [];
  let done = 0;
  for await (const { table, rowid, row } of rows) {
    if (!declared.has(table)) throw badExport(`The export has rows for ${table}, which its header does not list.`);
    counts[table] = (counts[table] ?? 0) + 1;
    done++;
    if (done % 1000 === 0) onProgress?.(done, total);
    if (table === SEQUENCE_TABLE) {
      sequences.push({ name: String(row.name), seq: Number(row.seq) });
      continue;
    }
    const { statement, table: def } = inserts.get(table)!;
    const values = def.columns.map((column) => decodeCell(row[column] ?? null));
    statement.run(...(def.rowid ? [rowid ?? null] : []), ...values);
  }
  onProgress?.(done, total);
  for (const table of header.tables) {
    if (counts[table.name] !== table.rows) {
      throw badExport(
        `The export is incomplete: its header promises ${table.rows} row(s) of ${table.name}, the file holds ${counts[table.name]}.`,
      );
    }
  }
  if (sequences.length > 0) {
    driver.exec(`DELETE FROM ${SEQUENCE_TABLE}`);
    const insert = driver.prepare(`INSERT INTO ${SEQUENCE_TABLE} (name, seq) VALUES (?, ?)`);
    for (const { name, seq } of sequences) insert.run(name, seq);
  }
  for (const trigger of triggers) driver.exec(trigger.sql);
  const broken = driver.prepare("PRAGMA foreign_key_check").all<{ table: string; parent: string }>();
  if (broken.length > 0) {
    const first = broken[0]!;
    throw badExport(
      `The export breaks ${broken.length} foreign key(s), e.g. a ${first.table} row pointing at a missing ${first.parent} row.`,
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
    driver.exec("PRAGMA defer_foreign_keys = ON");
    await loadRows(driver, header, parseRows(lines), onProgress);
    applyMigrations(driver);
    driver.exec("COMMIT");
    return { driver, path };
  } catch (error) {
    driver.close();
    rmSync(path, { force: true });
    throw error;
  }
}

function scratchHeader(driver: SqlDriver, original: ExportHeader): ExportHeader {
  return { ...original, schema_version: schemaVersion(driver), tables: exportTables(driver).map(describeTable) };
}

function* allRows(driver: SqlDriver): Generator<ExportRow> {
  for (const table of exportTables(driver)) yield* tableRows(driver, table);
}
