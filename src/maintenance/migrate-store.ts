import { dirname } from "node:path";
import { locate, notInitialized } from "../service/project.js";
import { listPostgresMigrations, migrationKind } from "../store/postgres/migrate.js";
import { projectTarget } from "../store/postgres/target.js";
import { migratePostgres } from "../store/postgres/upgrade.js";
import { checkDatabaseFile, databaseFileAt } from "../store/sqlite/database-file.js";
import { listMigrations, schemaVersion } from "../store/sqlite/migrate.js";
import { openDriver } from "../store/sqlite/open-driver.js";
import { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";
import { rethrowAsStoreFailure } from "../store/store-errors.js";

/** What `arbeit migrate` reports. */
export interface MigrationStep {
  engine: "sqlite" | "postgres";
  location: string;
  /** The Postgres schema. */
  schema?: string;
  dry_run: boolean;
  /** The schema's version before, and after (the same on a dry run). */
  from: number;
  to: number;
  /** The oldest schema version whose code works on the store (every earlier Arbeit release that knows it). */
  oldest_compatible: number;
  applied: Array<{ version: number; name: string; kind: "expand" | "contract" }>;
  /** What a dry run would apply. */
  pending: Array<{ version: number; name: string; kind: "expand" | "contract" }>;
}

/**
 * The deliberate step that upgrades the project's store to this release's schema: the store found
 * like every other command's (nearest `.arbeit/`, --db / ARBEIT_DB, ARBEIT_DATABASE_URL). A shared
 * Postgres store is migrated only here and by `arbeit serve` at start. A SQLite store, which one
 * checkout uses, is migrated by every open anyway; this says where it stands and brings it forward
 * the same way.
 */
export async function migrateProjectStore(options: {
  cwd: string;
  db?: string | undefined;
  dryRun?: boolean;
}): Promise<MigrationStep> {
  const location = locate(options);
  if (!location) throw notInitialized(options);
  const dryRun = options.dryRun === true;
  const postgres = projectTarget(options, dirname(location.dbPath));
  if (postgres) {
    const { location: where, ...report } = await migratePostgres(postgres, { dryRun });
    return { engine: "postgres", location: where, dry_run: dryRun, ...report };
  }
  checkDatabaseFile(location.dbPath);
  const from = databaseFileAt(location.dbPath) === undefined ? 0 : await sqliteVersion(location.dbPath);
  const kinds = listPostgresMigrations();
  const steps = listMigrations()
    .slice(from)
    .map((migration) => ({
      version: migration.version,
      name: migration.name,
      // The kind is said once, in the Postgres file of the same number: only a shared store needs it.
      kind: migrationKind(kinds[migration.version - 1]!).kind,
    }));
  // A file newer than this code is refused by the open below, dry run or not.
  if (dryRun && from <= listMigrations().length) {
    return {
      engine: "sqlite",
      location: location.dbPath,
      dry_run: true,
      from,
      to: from,
      oldest_compatible: from,
      applied: [],
      pending: steps,
    };
  }
  const store = await SqliteTaskStore.open(location.dbPath, { existing: true });
  const to = schemaVersion(store.driver);
  await store.close();
  return {
    engine: "sqlite",
    location: location.dbPath,
    dry_run: false,
    from,
    to,
    oldest_compatible: to,
    applied: steps,
    pending: [],
  };
}

/** The schema version of the SQLite file at `path`, read without writing anything. */
async function sqliteVersion(path: string): Promise<number> {
  try {
    const driver = await openDriver(path, { readonly: true });
    try {
      return schemaVersion(driver);
    } finally {
      driver.close();
    }
  } catch (error) {
    rethrowAsStoreFailure(error, path);
  }
}
