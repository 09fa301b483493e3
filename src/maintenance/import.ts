import { dirname } from "node:path";
import { withArticle } from "../domain/article.js";
import { ArbeitError } from "../domain/errors.js";
import { claimStatements } from "../store/sql/claims.js";
import type { SqlDb, SqlStore, SqlValue } from "../store/sql/database.js";
import { workStatements } from "../store/sql/work.js";
import type { SqlDriver } from "../store/sqlite/driver.js";
import { applyMigrations, listMigrations } from "../store/sqlite/migrate.js";
import { openDriver } from "../store/sqlite/open-driver.js";
import { SqliteDb } from "../store/sqlite/sqlite-db.js";
import { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";
import { type Counter, engineOf, isEmpty, quoteName, SEQUENCE_TABLE, type TableInfo } from "./engine.js";
import type { Progress } from "./export.js";
import {
  badExport,
  CREDENTIAL_TABLES,
  decodeCell,
  describeTable,
  type ExportHeader,
  type ExportPlace,
  type ExportRow,
  exportTables,
  parseHeader,
  tableRows,
} from "./export-format.js";
import { RowRules, rowKey } from "./row-rules.js";
import { createScratch, type Scratch } from "./scratch.js";

export interface ImportOptions {
  /** Delete everything in the store first (in the same transaction) instead of refusing. */
  replace?: boolean;
  /**
   * Keep the claims and active work the export holds (a restore of this store). Without it the
   * import is a copy for sharing: see `releaseLiveWork`.
   */
  keepClaims?: boolean;
  /**
   * Load the export's tokens and webhooks (a restore of this store). Without it the import is a
   * copy for sharing: their rows in the file are left out, and the store's own stay as they are,
   * `replace` included.
   */
  credentials?: boolean;
  onProgress?: Progress;
  /** The clock that stamps the end of the work a shared copy drops. */
  now?: () => Date;
}

export interface ImportSummary {
  schema_version: number;
  /** The schema version the export was written at (older ones are migrated on the way in). */
  export_schema_version: number;
  rows: number;
  tables: Record<string, number>;
  replaced: boolean;
  /** Claims and active work came in as exported (`keepClaims`). */
  claims_kept: boolean;
  /**
   * Leases the import ended: tasks' claims (their owner kept as an assignment) and file
   * reservations.
   */
  leases_dropped: number;
  /** Active work rows the import stopped. */
  work_stopped: number;
  /** The export's tokens and webhooks came in (`credentials`); otherwise the store kept its own. */
  credentials_imported: boolean;
  /** Rows of tokens and webhooks in the file that a copy for sharing left out. */
  credentials_left_out: number;
}

/** A row to load, with the line of the file it came from (unknown for a row a migration made). */
interface SourceRow {
  row: ExportRow;
  line: number | undefined;
}

type Rows = AsyncIterable<SourceRow>;

/** Where each row of a file loaded into the scratch database came from: table -> row key -> line. */
type Origin = Map<string, Map<string, number>>;

/**
 * Loads an export into `store` (SQLite or Postgres), reproducing ids, sequence numbers and
 * timestamps exactly, in one transaction: a bad or truncated file leaves the store as it was. Every
 * row is held to the rules the tools hold their input to (row-rules.ts), and a file that breaks one
 * is INVALID_IMPORT naming its line. The store must be empty unless `replace` is set. An export from
 * an older schema is loaded into a scratch SQLite database at its own version and migrated forward
 * first, so the rows go through the real migrations.
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

  let scratch: Scratch | undefined;
  try {
    let source: { header: ExportHeader; rows: Rows; migratedFrom?: number };
    if (header.schema_version < latest) {
      scratch = createScratch(scratchFolder(store));
      const { driver, origin } = await migrateInScratch(scratch, header, rest, options.onProgress);
      const db = new SqliteDb(driver);
      source = {
        header: await scratchHeader(db, header),
        rows: scratchRows(db, origin),
        migratedFrom: header.schema_version,
      };
    } else source = { header, rows: parseRows(rest) };

    let attempts = 0;
    const result = await store.transaction("write", async (db) => {
      // The file is read as it loads: a transaction the store re-runs (a lost race) has no rows left.
      if (++attempts > 1) {
        throw new ArbeitError(
          "STORE_UNAVAILABLE",
          "Another writer got in the import's way and its transaction was rolled back; nothing was imported.",
          { suggestions: ["Run the import again, with no agent writing to this store."] },
        );
      }
      const engine = engineOf(db);
      // A copy for sharing leaves the store's own credentials alone: they neither count as data
      // in the way nor are deleted by `replace`.
      const kept = options.credentials ? new Set<string>() : CREDENTIAL_TABLES;
      const empty = await isEmpty(db, kept);
      if (!empty && !options.replace) {
        throw new ArbeitError(
          "INVALID_ARGUMENT",
          `The store at ${store.location} already holds data; import needs an empty one.`,
          {
            suggestions: [
              "Import into an empty store instead: a new project folder's store, or a new file named with --db. Nothing here was changed; whether to discard this store's data is a person's decision.",
            ],
          },
        );
      }
      await engine.deferForeignKeys(db);
      if (!empty) await clearAll(db, kept);
      const tables = await loadRows(db, source.header, source.rows, {
        onProgress: options.onProgress,
        rules: new RowRules(),
        migratedFrom: source.migratedFrom,
        leaveOut: kept,
      });
      const released = options.keepClaims
        ? { leases: 0, work: 0 }
        : await releaseLiveWork(db, (options.now?.() ?? new Date()).toISOString());
      await engine.analyze(db);
      return { tables, released, version: await engine.schemaVersion(db) };
    });
    return {
      schema_version: result.version,
      export_schema_version: header.schema_version,
      rows: Object.values(result.tables).reduce((sum, n) => sum + n, 0),
      tables: result.tables,
      replaced: options.replace === true,
      claims_kept: options.keepClaims === true,
      leases_dropped: result.released.leases,
      work_stopped: result.released.work,
      credentials_imported: options.credentials === true,
      credentials_left_out: options.credentials
        ? 0
        : [...CREDENTIAL_TABLES].reduce((sum, table) => sum + (result.tables[table] ?? 0), 0),
    };
  } finally {
    scratch?.remove();
  }
}

/** Beside a SQLite store (its folder is the project's own); elsewhere a private temp folder. */
function scratchFolder(store: SqlStore): string | undefined {
  return store instanceof SqliteTaskStore && store.location !== ":memory:" ? dirname(store.location) : undefined;
}

async function* parseRows(lines: AsyncIterable<string>): AsyncGenerator<SourceRow> {
  let line = 1;
  for await (const text of lines) {
    line++;
    if (text.trim() === "") continue;
    let row: ExportRow;
    try {
      row = JSON.parse(text) as ExportRow;
    } catch {
      throw badExport("this line is not valid JSON.", { line });
    }
    if (
      typeof row !== "object" ||
      row === null ||
      typeof row.table !== "string" ||
      typeof row.row !== "object" ||
      row.row === null ||
      Array.isArray(row.row)
    ) {
      throw badExport('this line is not a row ({"table", "row"}).', { line });
    }
    yield { row, line };
  }
}

/**
 * A copy for sharing holds no live work: the sessions that claimed and worked on its tasks are on
 * another machine and will never renew or stop anything here, so their claims would refuse
 * everyone's tasks until the leases ran out. Every lease ends as an owner change ends one (the
 * owner stays, as an assignment; the lease is not part of the history, so no event), and every
 * active work row is stopped, no earlier than it started. File reservations, leases of those
 * sessions too, are dropped (counted with the leases). Events, session links and file
 * associations stay: they are the history.
 */
async function releaseLiveWork(db: SqlDb, now: string): Promise<{ leases: number; work: number }> {
  const claims = claimStatements(db);
  const leased = (await db.all(
    "SELECT id FROM tasks WHERE lease_expires_at IS NOT NULL OR claim_session IS NOT NULL ORDER BY id",
  )) as Array<{ id: string }>;
  for (const { id } of leased) await claims.dropLease(id);
  const work = workStatements(db);
  const working = (await db.all(
    `SELECT task_id, COUNT(*) AS sessions, MAX(started_at) AS started_at FROM active_work
     WHERE stopped_at IS NULL GROUP BY task_id ORDER BY task_id`,
  )) as Array<{ task_id: string; sessions: number | string; started_at: string }>;
  let stopped = 0;
  for (const row of working) {
    await work.stopWorkOn(row.task_id, row.started_at > now ? row.started_at : now);
    stopped += Number(row.sessions);
  }
  const reservations = await db.run("DELETE FROM reservations");
  return { leases: leased.length + reservations, work: stopped };
}

/** Empties every table but `keep`, children before the tables they point at. */
async function clearAll(db: SqlDb, keep: ReadonlySet<string>): Promise<void> {
  const tables = await engineOf(db).tables(db);
  for (const table of tables.reverse()) if (!keep.has(table.name)) await db.run(`DELETE FROM ${quoteName(table.name)}`);
}

interface LoadOptions {
  onProgress?: Progress | undefined;
  /** Held to every row; left out only for the scratch load of an older schema, which they do not describe. */
  rules?: RowRules;
  /** Filled with the line each row came from (the scratch load). */
  origin?: Origin;
  /** The schema an older export was migrated from, for rows no line can be named for. */
  migratedFrom?: number | undefined;
  /** Tables whose rows are checked and counted but not inserted. */
  leaveOut?: ReadonlySet<string>;
}

/**
 * Inserts every row, checks the counts against the header, the rules and the foreign keys,
 * restores the counters; returns the counts. Rows come back exactly as exported, including what
 * triggers derived when they were first written: the triggers are set aside while loading.
 */
async function loadRows(
  db: SqlDb,
  header: ExportHeader,
  rows: Rows,
  options: LoadOptions,
): Promise<Record<string, number>> {
  const { onProgress, rules, origin, migratedFrom } = options;
  const engine = engineOf(db);
  const here = await engine.tables(db);
  const byName = new Map(here.map((table) => [table.name, table]));
  const declared = new Map(header.tables.map((table) => [table.name, { ...table, known: new Set(table.columns) }]));
  const inserts = new Map<string, { sql: string; columns: string[]; rowid: boolean }>();
  for (const table of header.tables) {
    if (table.name === SEQUENCE_TABLE) continue;
    const target = byName.get(table.name);
    if (!target || target.columns.join(",") !== table.columns.join(",")) {
      throw badExport(
        `the export's table ${table.name} (${table.columns.join(", ")}) does not match this schema${target ? ` (${target.columns.join(", ")})` : ""}.`,
        { line: 1, table: table.name },
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
  /** A row of the scratch database that no line can be named for: said so, by its key. */
  const refuse = (message: string, place: ExportPlace, key: string | undefined) => {
    if (place.line !== undefined || migratedFrom === undefined) return badExport(message, place);
    const which = key === undefined ? `a ${place.table} row` : `the ${place.table} row ${key}`;
    return badExport(`${which}, as migrated from the export's schema version ${migratedFrom}: ${message}`, place);
  };
  const total = header.tables.reduce((sum, table) => sum + table.rows, 0);
  const counts: Record<string, number> = Object.fromEntries(header.tables.map((table) => [table.name, 0]));
  const counters: Counter[] = [];
  let done = 0;
  let lastLine = 1;
  await engine.withoutTriggers(db, async () => {
    for await (const { row: exported, line } of rows) {
      const { table, rowid, row } = exported;
      lastLine = line ?? lastLine;
      const place = { line, table };
      const key = rowKey(table, row);
      const describedAs = declared.get(table);
      if (!describedAs) throw badExport(`the export has rows for ${table}, which its header does not list.`, place);
      for (const column of Object.keys(row)) {
        if (!describedAs.known.has(column)) {
          throw refuse(`unknown column ${column}: ${table} has no such column.`, { ...place, column }, key);
        }
      }
      if (describedAs.rowid ? !Number.isSafeInteger(rowid) || rowid! < 1 : rowid !== undefined) {
        const message = describedAs.rowid
          ? `the ${table} row needs a rowid, a whole number from 1 (it has ${JSON.stringify(rowid)}).`
          : `${table} rows carry no rowid.`;
        throw refuse(message, { ...place, column: "rowid" }, key);
      }
      const problem = rules?.check(table, row, line ?? -(done + 1));
      if (problem) throw refuse(`${problem.message}.`, { ...place, column: problem.column }, key);
      if (origin && key !== undefined && line !== undefined) {
        const lines = origin.get(table) ?? new Map<string, number>();
        origin.set(table, lines);
        lines.set(key, line);
      }
      counts[table] = (counts[table] ?? 0) + 1;
      done++;
      if (done % 1000 === 0) onProgress?.(done, total);
      if (table === SEQUENCE_TABLE) {
        counters.push({ name: String(row.name), seq: Number(row.seq) });
        continue;
      }
      if (options.leaveOut?.has(table)) continue;
      const insert = inserts.get(table)!;
      const values: SqlValue[] = [];
      for (const column of insert.columns) {
        const value = row[column] ?? null;
        // Text, numbers and null go in as they are; only anything else needs decoding (or refusing).
        values.push(
          typeof value === "object" && value !== null
            ? (decodeCell(value, { ...place, column }) as SqlValue)
            : (value as SqlValue),
        );
      }
      try {
        await db.run(insert.sql, ...(insert.rowid ? [rowid ?? null] : []), ...values);
      } catch (error) {
        if (!isRowRefusal(error)) throw error;
        const message = `the store refuses this ${table} row: ${(error as Error).message}.`;
        throw refuse(message, { ...place, column: refusedColumn(error) }, key);
      }
    }
  });
  onProgress?.(done, total);
  for (const table of header.tables) {
    if (counts[table.name] !== table.rows) {
      throw badExport(
        `the export is incomplete: its header promises ${table.rows} row(s) of ${table.name}, the file holds ${counts[table.name]} (it ends at line ${lastLine}).`,
        { line: lastLine, table: table.name },
      );
    }
  }
  const [problem] = (rules?.finish() ?? []).sort((a, b) => lineRank(a.ref) - lineRank(b.ref));
  if (problem) {
    const line = problem.ref > 0 ? problem.ref : undefined;
    throw refuse(`${problem.message}.`, { line, table: problem.table, column: problem.column }, problem.key);
  }
  await engine.restoreCounters(db, counters, here);
  const broken = await engine.foreignKeyProblems(db);
  if (broken.length > 0) {
    const first = broken[0]!;
    throw badExport(
      `the export breaks ${broken.length} foreign key(s), e.g. ${withArticle(first.table)} row pointing at a missing ${first.parent} row.`,
      { table: first.table },
    );
  }
  return counts;
}

/** Lines first in file order, then rows no line is known for. */
function lineRank(ref: number): number {
  return ref > 0 ? ref : Number.MAX_SAFE_INTEGER + ref;
}

/**
 * The database refused the row itself (a constraint, a type it cannot hold), as opposed to
 * failing (disk full, connection lost): SQLite's constraint and mismatch errors in either
 * driver's wording, Postgres's data exceptions (22xxx) and integrity violations (23xxx).
 */
function isRowRefusal(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = String((error as { code?: unknown }).code ?? "");
  if (/^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code) || /^2[23][0-9A-Z]{3}$/.test(code)) return true;
  return /constraint failed|datatype mismatch|string or blob too big/i.test(error.message);
}

/** The column a refusal names, where it names one. */
function refusedColumn(error: unknown): string | undefined {
  const { column, detail, message } = error as { column?: unknown; detail?: unknown; message?: unknown };
  if (typeof column === "string") return column;
  const key = typeof detail === "string" ? /^Key \(([^,)]+)/.exec(detail)?.[1] : undefined;
  if (key) return key;
  return typeof message === "string" ? /constraint failed: [^.\s]+\.([^,\s]+)/.exec(message)?.[1] : undefined;
}

/** Loads an older export into the scratch database at its own schema version, then migrates it. */
async function migrateInScratch(
  scratch: Scratch,
  header: ExportHeader,
  lines: AsyncIterable<string>,
  onProgress: Progress | undefined,
): Promise<{ driver: SqlDriver; origin: Origin }> {
  const driver = await openDriver(scratch.path);
  scratch.onRemove(() => driver.close());
  driver.exec("PRAGMA foreign_keys = ON");
  driver.exec("BEGIN IMMEDIATE");
  applyMigrations(driver, listMigrations().slice(0, header.schema_version));
  const db = new SqliteDb(driver);
  await engineOf(db).deferForeignKeys(db);
  const origin: Origin = new Map();
  await loadRows(db, header, parseRows(lines), { onProgress, origin });
  try {
    applyMigrations(driver);
  } catch (error) {
    throw badExport(
      `the export's rows could not be migrated from schema version ${header.schema_version}: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  driver.exec("COMMIT");
  return { driver, origin };
}

async function scratchHeader(db: SqlDb, original: ExportHeader): Promise<ExportHeader> {
  return {
    ...original,
    schema_version: await engineOf(db).schemaVersion(db),
    tables: (await exportTables(db)).map(describeTable),
  };
}

async function* scratchRows(db: SqlDb, origin: Origin): AsyncGenerator<SourceRow> {
  for (const table of await exportTables(db)) {
    const lines = origin.get(table.name);
    for await (const row of tableRows(db, table as TableInfo)) {
      const key = rowKey(row.table, row.row);
      yield { row, line: key === undefined ? undefined : lines?.get(key) };
    }
  }
}
