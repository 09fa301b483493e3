import { z } from "zod";
import { ArbeitError } from "../domain/errors.js";
import { messageFor } from "../schemas/zod-errors.js";
import type { SqlDb, SqlValue } from "../store/sql/database.js";
import { engineOf, quoteName, rowCount, SEQUENCE_TABLE, type TableInfo } from "./engine.js";

/**
 * The export file (docs/maintenance.md): JSON Lines. The first line is a header naming the
 * format, its version, the schema version and every table with its columns and row count; each
 * further line is one row, `{"table", "rowid"?, "row"}`. Tables are read from the database, so
 * a table added by a later migration is exported without a change here. The same store content
 * exports to the same lines from SQLite and from Postgres.
 */
export const EXPORT_FORMAT = "arbeit-export";
export const EXPORT_FORMAT_VERSION = 1;

export interface ExportTable {
  name: string;
  columns: string[];
  rows: number;
  /** Rows carry their rowid (tables whose rowid is not a column). */
  rowid: boolean;
}

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  format_version: number;
  schema_version: number;
  exported_at: string;
  tables: ExportTable[];
}

/** A cell as JSON: text, number and null as themselves, a blob as {"$base64": "..."}. */
export type CellValue = string | number | null | { $base64: string };

export interface ExportRow {
  table: string;
  rowid?: number;
  row: Record<string, CellValue>;
}

/**
 * Tables of credentials and delivery targets: the service's tokens (their hashes let a secret in)
 * and the webhooks (a URL is where the project's questions go, and its signing secret signs them).
 * A copy for sharing carries none of them; only a restore of this same store does.
 */
export const CREDENTIAL_TABLES: ReadonlySet<string> = new Set(["tokens", "webhooks"]);

const PAGE = 500;

/** Where in a file import found it unusable: the line (the header is line 1), table and column. */
export interface ExportPlace {
  line?: number | undefined;
  table?: string | undefined;
  column?: string | undefined;
}

/** A file import cannot use; nothing is imported. The message names the line to fix. */
export function badExport(message: string, place: ExportPlace = {}): ArbeitError {
  const details: Record<string, unknown> = {};
  for (const key of ["line", "table", "column"] as const) if (place[key] !== undefined) details[key] = place[key];
  const at = place.line === undefined ? "" : `Line ${place.line} of the export: `;
  return new ArbeitError("INVALID_IMPORT", `${at}${message}`, { details });
}

/** What an export holds: every user table, then the event counter. */
export async function exportTables(db: SqlDb): Promise<Array<TableInfo & { rows: number }>> {
  const engine = engineOf(db);
  const tables: Array<TableInfo & { rows: number }> = [];
  for (const table of await engine.tables(db)) tables.push({ ...table, rows: await rowCount(db, table.name) });
  const counters = await engine.counters(db);
  if (counters.length > 0) {
    tables.push({ name: SEQUENCE_TABLE, columns: ["name", "seq"], hiddenRowid: false, key: "", rows: counters.length });
  }
  return tables;
}

export function describeTable(table: TableInfo & { rows: number }): ExportTable {
  return { name: table.name, columns: table.columns, rows: table.rows, rowid: table.hiddenRowid };
}

function encodeCell(value: unknown): CellValue {
  if (value instanceof Uint8Array) return { $base64: Buffer.from(value).toString("base64") };
  if (typeof value === "bigint") return Number(value);
  return value as CellValue;
}

export function decodeCell(value: unknown, place: ExportPlace = {}): SqlValue | Uint8Array {
  if (value === null || typeof value === "string" || typeof value === "number") return value;
  if (typeof value === "object" && typeof (value as { $base64?: unknown }).$base64 === "string") {
    return new Uint8Array(Buffer.from((value as { $base64: string }).$base64, "base64"));
  }
  const where = place.table && place.column ? ` in ${place.table}.${place.column}` : "";
  throw badExport(`a value the store cannot keep${where}: ${JSON.stringify(value)?.slice(0, 60)}.`, place);
}

/** Every row of `table` in rowid order, a page at a time. Call inside one read transaction. */
export async function* tableRows(db: SqlDb, table: TableInfo): AsyncGenerator<ExportRow> {
  if (table.name === SEQUENCE_TABLE) {
    for (const counter of await engineOf(db).counters(db)) yield { table: table.name, row: { ...counter } };
    return;
  }
  const from = quoteName(table.name);
  const columns = table.columns.map(quoteName).join(", ");
  if (table.key === "") {
    for (const raw of await db.all(`SELECT ${columns} FROM ${from} ORDER BY 1`)) yield toRow(table.name, raw);
    return;
  }
  const key = quoteName(table.key);
  const page = `SELECT ${key} AS "__rowid", ${columns} FROM ${from} WHERE ${key} > ? ORDER BY ${key} LIMIT ${PAGE}`;
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = await db.all(page, after);
    for (const { __rowid, ...raw } of rows) {
      const row = toRow(table.name, raw);
      if (table.hiddenRowid) row.rowid = Number(__rowid);
      yield row;
    }
    if (rows.length < PAGE) return;
    after = Number(rows.at(-1)!.__rowid);
  }
}

function toRow(table: string, raw: Record<string, unknown>): ExportRow {
  const row: Record<string, CellValue> = {};
  for (const [key, value] of Object.entries(raw)) row[key] = encodeCell(value);
  return { table, row };
}

const headerTables = z.array(
  z.object({
    name: z.string().min(1),
    columns: z.array(z.string().min(1)),
    rows: z.number().int().min(0),
    rowid: z.boolean(),
  }),
);

/** Checks that the first line of a file is an export header this code can read. */
export function parseHeader(line: string | undefined, latestSchema: number): ExportHeader {
  const header = { line: 1 };
  let parsed: Partial<ExportHeader> | undefined;
  try {
    parsed = line === undefined ? undefined : (JSON.parse(line) as Partial<ExportHeader>);
  } catch {
    parsed = undefined;
  }
  if (parsed?.format !== EXPORT_FORMAT || !Array.isArray(parsed.tables)) {
    throw badExport("this is not an Arbeit export: its first line is not the export header.", header);
  }
  if (parsed.format_version !== EXPORT_FORMAT_VERSION) {
    throw badExport(
      `the export is in format version ${String(parsed.format_version)}; this Arbeit reads version ${EXPORT_FORMAT_VERSION}.`,
      header,
    );
  }
  const schema = parsed.schema_version;
  if (typeof schema !== "number" || !Number.isInteger(schema) || schema < 1) {
    throw badExport("the export header has no valid schema_version.", header);
  }
  if (schema > latestSchema) {
    throw new ArbeitError(
      "SCHEMA_TOO_NEW",
      `The export was written at schema version ${schema}, but this Arbeit only knows up to ${latestSchema}.`,
      { details: { export_version: schema, supported_version: latestSchema } },
    );
  }
  const tables = headerTables.safeParse(parsed.tables);
  if (!tables.success) {
    const issue = tables.error.issues[0]!;
    throw badExport(`the export header's tables.${issue.path.join(".")} ${messageFor(issue)}.`, header);
  }
  const names = new Set<string>();
  for (const table of tables.data) {
    if (names.has(table.name)) throw badExport(`the export header lists the table ${table.name} twice.`, header);
    names.add(table.name);
  }
  return parsed as ExportHeader;
}
