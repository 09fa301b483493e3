import { join } from "node:path";
import {
  describeTable,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  exportTables,
  tableRows,
} from "../../src/maintenance/export-format.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { SqliteDb } from "../../src/store/sqlite/sqlite-db.js";
import { tempDir } from "../helpers/temp.js";
import { databaseFromFixture } from "../migrations/support.js";

/**
 * An export file taken apart to be edited line by line, as a hostile or careless hand would.
 * `rows[i]` is line i + 2 of the file (the header is line 1); a string is written as it is.
 */
export interface ExportRowLine {
  table: string;
  rowid?: number;
  row: Record<string, unknown>;
}

export interface Dump {
  header: any;
  rows: Array<ExportRowLine | string>;
}

export function parseDump(text: string): Dump {
  const [header, ...rows] = text.trimEnd().split("\n");
  return { header: JSON.parse(header!), rows: rows.map((line) => JSON.parse(line) as ExportRowLine) };
}

/** The file again, with the header's row counts made to match the rows (so only the edit is wrong). */
export function renderDump(dump: Dump): string {
  const counts = new Map<string, number>();
  for (const row of dump.rows) if (typeof row !== "string") counts.set(row.table, (counts.get(row.table) ?? 0) + 1);
  const header = {
    ...dump.header,
    tables: dump.header.tables.map((t: any) =>
      typeof t === "object" && t ? { ...t, rows: counts.get(t.name) ?? 0 } : t,
    ),
  };
  return `${[JSON.stringify(header), ...dump.rows.map((row) => (typeof row === "string" ? row : JSON.stringify(row)))].join("\n")}\n`;
}

export const lineOf = (index: number) => index + 2;

/** Edits the first row of `table` that `pick` accepts; returns its line. */
export function editRow(
  dump: Dump,
  table: string,
  pick: (row: Record<string, any>) => boolean,
  change: (line: ExportRowLine) => void,
): number {
  const index = dump.rows.findIndex((r) => typeof r !== "string" && r.table === table && pick(r.row));
  if (index < 0) throw new Error(`no ${table} row to edit`);
  change(dump.rows[index] as ExportRowLine);
  return lineOf(index);
}

export function findRow(dump: Dump, table: string, pick: (row: Record<string, any>) => boolean): Record<string, any> {
  const found = dump.rows.find((r) => typeof r !== "string" && r.table === table && pick(r.row)) as ExportRowLine;
  if (!found) throw new Error(`no ${table} row`);
  return found.row;
}

/** Adds a row after the last one of its table (a fresh rowid where the table has them); returns its line. */
export function appendRow(dump: Dump, table: string, row: Record<string, unknown>): number {
  let last = -1;
  let rowid = 0;
  for (let i = 0; i < dump.rows.length; i++) {
    const r = dump.rows[i]!;
    if (typeof r === "string" || r.table !== table) continue;
    last = i;
    if (r.rowid !== undefined) rowid = Math.max(rowid, r.rowid);
  }
  if (last < 0) throw new Error(`no ${table} rows to append to`);
  const hasRowid = (dump.rows[last] as ExportRowLine).rowid !== undefined;
  dump.rows.splice(last + 1, 0, { table, ...(hasRowid ? { rowid: rowid + 1 } : {}), row });
  return lineOf(last + 1);
}

/** An export written at an older schema version, from the frozen fixture of that version. */
export async function oldExport(version: number): Promise<string> {
  const { dir, cleanup } = tempDir();
  try {
    const path = join(dir, "old.db");
    await databaseFromFixture(path, version);
    const driver = await openDriver(path);
    try {
      const db = new SqliteDb(driver);
      const tables = await exportTables(db);
      const lines = [
        JSON.stringify({
          format: EXPORT_FORMAT,
          format_version: EXPORT_FORMAT_VERSION,
          schema_version: version,
          exported_at: "2026-01-01T00:00:00.000Z",
          tables: tables.map(describeTable),
        }),
      ];
      for (const table of tables) for await (const row of tableRows(db, table)) lines.push(JSON.stringify(row));
      return `${lines.join("\n")}\n`;
    } finally {
      driver.close();
    }
  } finally {
    cleanup();
  }
}
