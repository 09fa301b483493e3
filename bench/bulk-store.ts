import { sqlStoreTx } from "../src/store/sql/sql-tx.js";
import type { SqlDriver } from "../src/store/sqlite/driver.js";
import { applyMigrations } from "../src/store/sqlite/migrate.js";
import { openDriver } from "../src/store/sqlite/open-driver.js";
import { SqliteDb } from "../src/store/sqlite/sqlite-db.js";
import type { StoreTx, TaskStore } from "../src/store/task-store.js";

/**
 * A TaskStore for seeding only: the real query layer (sqlStoreTx over SqliteDb) over the real
 * schema, but thousands of service calls share one transaction instead of one each. The rows
 * and events written are exactly those of the real store; only the commit boundaries differ.
 * A failing call cannot be rolled back on its own, so the seeder treats any error as fatal.
 */
export class BulkStore implements TaskStore {
  readonly location: string;
  readonly #driver: SqlDriver;
  readonly #tx: StoreTx;
  #open = false;

  private constructor(driver: SqlDriver, location: string) {
    this.#driver = driver;
    this.location = location;
    this.#tx = sqlStoreTx(new SqliteDb(driver), () => new Date().toISOString());
  }

  static async open(path: string): Promise<BulkStore> {
    const driver = await openDriver(path);
    // The file ends up in WAL mode like a real store's; durability is irrelevant while seeding.
    driver.exec("PRAGMA journal_mode = WAL");
    driver.exec("PRAGMA synchronous = OFF");
    driver.exec("PRAGMA foreign_keys = ON");
    driver.exec("PRAGMA cache_size = -262144");
    driver.exec("BEGIN IMMEDIATE");
    applyMigrations(driver);
    driver.exec("COMMIT");
    return new BulkStore(driver, path);
  }

  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    this.#begin();
    return fn(this.#tx);
  }

  read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    this.#begin();
    return fn(this.#tx);
  }

  /** Commits what the calls so far wrote; call only between service calls. */
  commit(): void {
    if (!this.#open) return;
    this.#driver.exec("COMMIT");
    this.#open = false;
  }

  /** Leaves the file self-contained: WAL folded back into the database. */
  async close(): Promise<void> {
    this.commit();
    this.#driver.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    this.#driver.close();
  }

  #begin(): void {
    if (this.#open) return;
    this.#driver.exec("BEGIN IMMEDIATE");
    this.#open = true;
  }
}

const COUNTED = [
  "tasks",
  "relationships",
  "context_entries",
  "progress_items",
  "session_links",
  "file_associations",
  "events",
] as const;

/** Row counts of the main tables, for the report. */
export async function countRows(path: string): Promise<Record<string, number>> {
  const driver = await openDriver(path);
  try {
    const counts: Record<string, number> = {};
    for (const table of COUNTED) {
      counts[table] = Number(driver.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get<{ n: number }>()?.n ?? 0);
    }
    return counts;
  } finally {
    driver.close();
  }
}
