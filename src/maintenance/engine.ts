import { BOOKKEEPING_TABLES } from "../store/postgres/migrate.js";
import type { SqlDb } from "../store/sql/database.js";

/**
 * What the maintenance commands need to know about a database beyond the store's own queries:
 * which tables and columns it has, its schema version, its counters, how to set triggers aside
 * and how to check its integrity. This is where SQLite and Postgres differ most, so the two
 * engines stand side by side here; export, import, backup and doctor are written once above it.
 */
export interface TableInfo {
  name: string;
  columns: string[];
  /**
   * Rows carry a rowid that is not one of the columns: SQLite's implicit rowid, Postgres's
   * explicit `rowid` column. Export and import keep it, because some reads order by it.
   */
  hiddenRowid: boolean;
  /**
   * The integer column rows are read in order of: `rowid`, or the column that is the rowid; empty
   * for a table with neither (SQLite's WITHOUT ROWID), which is read whole in key order.
   */
  key: string;
}

/** The counter behind events.seq, exported under SQLite's name for it so exports stay alike. */
export const SEQUENCE_TABLE = "sqlite_sequence";

export interface Counter {
  name: string;
  seq: number;
}

export interface MaintenanceEngine {
  /** Every user table, parents before the tables that reference them, otherwise in creation order. */
  tables(db: SqlDb): Promise<TableInfo[]>;
  schemaVersion(db: SqlDb): Promise<number>;
  /** The AUTOINCREMENT / identity counters worth keeping (the event sequence). */
  counters(db: SqlDb): Promise<Counter[]>;
  /** Sets the counters after an import; identity columns move past the rows loaded. */
  restoreCounters(db: SqlDb, counters: Counter[], tables: TableInfo[]): Promise<void>;
  /** Runs `load` with the user triggers set aside (rows come back as exported), same transaction. */
  withoutTriggers<T>(db: SqlDb, load: () => Promise<T>): Promise<T>;
  /** Lets rows point at rows loaded later in the same transaction (superseded_by, say). */
  deferForeignKeys(db: SqlDb): Promise<void>;
  /** Problems the engine itself can find in its files: none means the storage is sound. */
  integrityProblems(db: SqlDb): Promise<string[]>;
  /** Rows whose foreign key points at a row that does not exist. */
  foreignKeyProblems(db: SqlDb): Promise<Array<{ table: string; rowid: number | null; parent: string }>>;
  /** Brings the planner's statistics up to date after a bulk load. */
  analyze(db: SqlDb): Promise<void>;
}

export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

const sqlite: MaintenanceEngine = {
  async tables(db) {
    const tables = await db.all(
      `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
       ORDER BY rowid`,
    );
    const out: TableInfo[] = [];
    for (const { name, sql } of tables as Array<{ name: string; sql: string }>) {
      const columns = (await db.all("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", name)) as Array<{
        name: string;
        type: string;
        pk: number;
      }>;
      const keys = columns.filter((column) => column.pk > 0);
      const rowidAlias = keys.length === 1 && keys[0]!.type.toUpperCase() === "INTEGER";
      const withoutRowid = /\bWITHOUT\s+ROWID\b/i.test(sql);
      out.push({
        name,
        columns: columns.map((column) => column.name),
        hiddenRowid: !rowidAlias && !withoutRowid,
        key: withoutRowid ? "" : rowidAlias ? keys[0]!.name : "rowid",
      });
    }
    return out;
  },
  async schemaVersion(db) {
    return Number((await db.get("PRAGMA user_version"))?.user_version ?? 0);
  },
  async counters(db) {
    if (!(await db.get("SELECT 1 AS found FROM sqlite_master WHERE name = 'sqlite_sequence'"))) return [];
    return (await db.all("SELECT name, seq FROM sqlite_sequence ORDER BY name")).map((row) => ({
      name: String(row.name),
      seq: Number(row.seq),
    }));
  },
  async restoreCounters(db, counters) {
    if (!(await db.get("SELECT 1 AS found FROM sqlite_master WHERE name = 'sqlite_sequence'"))) return;
    await db.run("DELETE FROM sqlite_sequence");
    for (const { name, seq } of counters)
      await db.run("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", name, seq);
  },
  async withoutTriggers(db, load) {
    const triggers = (await db.all("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")) as Array<{
      name: string;
      sql: string;
    }>;
    for (const trigger of triggers) await db.run(`DROP TRIGGER ${quoteName(trigger.name)}`);
    const result = await load();
    for (const trigger of triggers) await db.run(trigger.sql);
    return result;
  },
  async deferForeignKeys(db) {
    await db.run("PRAGMA defer_foreign_keys = ON");
  },
  async integrityProblems(db) {
    return ((await db.all("PRAGMA integrity_check")) as Array<{ integrity_check: string }>)
      .map((row) => row.integrity_check)
      .filter((message) => message !== "ok");
  },
  async foreignKeyProblems(db) {
    return (
      (await db.all("PRAGMA foreign_key_check")) as Array<{ table: string; rowid: number | null; parent: string }>
    ).map((row) => ({ table: row.table, rowid: row.rowid === null ? null : Number(row.rowid), parent: row.parent }));
  },
  async analyze() {
    // Deliberately nothing: the SQLite store's statements are planned without statistics (index
    // hints, join order), and sqlite_stat1 would only let the planner second-guess them.
  },
};

/** Postgres keeps its migration logs in tables of their own; they are not data to export. */
const [LEGACY_LOG, CHANGE_LOG] = BOOKKEEPING_TABLES;

/** The migration logs the current schema has (the change log only once a later migration made it). */
async function bookkeeping(db: SqlDb): Promise<string[]> {
  const changes = await db.get("SELECT to_regclass(?) IS NOT NULL AS present", CHANGE_LOG);
  return changes?.present === true ? [LEGACY_LOG, CHANGE_LOG] : [LEGACY_LOG];
}

const postgres: MaintenanceEngine = {
  async tables(db) {
    // Creation order: a table's oid is assigned when it is created.
    const rows = (await db.all(
      `SELECT c.relname AS name, a.attname AS column, a.attidentity <> '' AS identity FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname NOT IN (?, ?)
       ORDER BY c.oid, a.attnum`,
      LEGACY_LOG,
      CHANGE_LOG,
    )) as Array<{ name: string; column: string; identity: boolean }>;
    const tables = new Map<string, TableInfo>();
    for (const { name, column, identity } of rows) {
      let table = tables.get(name);
      if (!table) {
        table = { name, columns: [], hiddenRowid: false, key: "" };
        tables.set(name, table);
      }
      if (column === "rowid") {
        table.hiddenRowid = true;
        table.key = "rowid";
      } else {
        table.columns.push(column);
        // An identity column that is not `rowid` plays the part of SQLite's rowid alias (events.seq).
        if (identity && table.key === "") table.key = column;
      }
    }
    const keys = (await db.all(
      `SELECT child.relname AS child, parent.relname AS parent FROM pg_constraint k
       JOIN pg_class child ON child.oid = k.conrelid JOIN pg_class parent ON parent.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = child.relnamespace
       WHERE k.contype = 'f' AND n.nspname = current_schema()`,
    )) as Array<{ child: string; parent: string }>;
    return parentsFirst([...tables.values()], keys);
  },
  async schemaVersion(db) {
    let version = 0;
    for (const log of await bookkeeping(db))
      version = Math.max(version, Number((await db.get(`SELECT COALESCE(MAX(version), 0) AS v FROM ${log}`))?.v ?? 0));
    return version;
  },
  async counters(db) {
    const row = await db.get("SELECT pg_sequence_last_value(pg_get_serial_sequence('events', 'seq')::regclass) AS seq");
    return row?.seq === null || row?.seq === undefined ? [] : [{ name: "events", seq: Number(row.seq) }];
  },
  async restoreCounters(db, counters, tables) {
    // Identity columns move past the rows loaded with explicit values; the event counter to
    // where it stood, so that seq numbers are never handed out twice.
    for (const table of tables) {
      const column = table.key;
      if (!column) continue;
      const counter = counters.find((c) => c.name === table.name)?.seq ?? 0;
      await db.get(
        `SELECT setval(pg_get_serial_sequence(?, ?), GREATEST(COALESCE((SELECT MAX(${quoteName(column)}) FROM ${quoteName(table.name)}), 0), ?, 1), (SELECT COUNT(*) > 0 OR ? > 0 FROM ${quoteName(table.name)}))`,
        table.name,
        column,
        counter,
        counter,
      );
    }
  },
  async withoutTriggers(db, load) {
    // Table owners may switch their own triggers off; foreign keys (system triggers) stay on.
    const tables = (await db.all(
      `SELECT DISTINCT c.relname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND NOT t.tgisinternal`,
    )) as Array<{ name: string }>;
    for (const { name } of tables) await db.run(`ALTER TABLE ${quoteName(name)} DISABLE TRIGGER USER`);
    const result = await load();
    for (const { name } of tables) await db.run(`ALTER TABLE ${quoteName(name)} ENABLE TRIGGER USER`);
    return result;
  },
  async deferForeignKeys(db) {
    // Only the keys declared DEFERRABLE wait (context_entries.superseded_by, which points at a
    // later row); the rest hold as each row goes in, and export order puts parents first.
    await db.run("SET CONSTRAINTS ALL DEFERRED");
  },
  async integrityProblems() {
    // Postgres checks its own pages and WAL; there is no SQL-level check to run here.
    return [];
  },
  async foreignKeyProblems() {
    // Postgres enforces every foreign key on every write, import included: none can be broken.
    return [];
  },
  async analyze(db) {
    const tables = await postgres.tables(db);
    await db.run(`ANALYZE ${[...tables.map((t) => t.name), ...(await bookkeeping(db))].map(quoteName).join(", ")}`);
  },
};

/**
 * `tables` reordered so that every table comes after the tables its foreign keys point at, and
 * otherwise keeps its place. Creation order alone is not enough on Postgres: a schema restored
 * with pg_dump creates its tables in name order and adds the keys afterwards, and an export in
 * that order puts rows before the rows they reference, which no import can load. Keys that point
 * back at their own table, or a cycle, cannot be ordered away; the rest of a cycle keeps its
 * place, for keys declared deferrable to settle.
 */
function parentsFirst(tables: TableInfo[], keys: Array<{ child: string; parent: string }>): TableInfo[] {
  const parents = new Map<string, Set<string>>(tables.map((table) => [table.name, new Set<string>()]));
  for (const { child, parent } of keys) if (child !== parent && parents.has(parent)) parents.get(child)?.add(parent);
  const placed = new Set<string>();
  const ordered: TableInfo[] = [];
  while (ordered.length < tables.length) {
    const waiting = tables.filter((table) => !placed.has(table.name));
    const next = waiting.find((table) => [...parents.get(table.name)!].every((p) => placed.has(p))) ?? waiting[0]!;
    placed.add(next.name);
    ordered.push(next);
  }
  return ordered;
}

export function engineOf(db: SqlDb): MaintenanceEngine {
  return db.dialect.name === "sqlite" ? sqlite : postgres;
}

export async function rowCount(db: SqlDb, table: string): Promise<number> {
  return Number((await db.get(`SELECT COUNT(*) AS n FROM ${quoteName(table)}`))?.n ?? 0);
}

/** True when no user table holds a row. */
export async function isEmpty(db: SqlDb, ignore: ReadonlySet<string> = new Set()): Promise<boolean> {
  for (const table of await engineOf(db).tables(db))
    if (!ignore.has(table.name) && (await rowCount(db, table.name)) > 0) return false;
  return true;
}
