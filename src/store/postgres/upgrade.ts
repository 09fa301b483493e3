import { ArbeitError } from "../../domain/errors.js";
import { rethrowAsStoreFailure } from "../store-errors.js";
import { advisoryLock, checkSchemaName, DEFAULT_SCHEMA, describeLocation, lockKey } from "./config.js";
import {
  type AppliedMigration,
  applyPostgresMigrations,
  listPostgresMigrations,
  type MigrationReport,
  migrationKind,
  schemaFit,
  schemaState,
  schemaTooNew,
} from "./migrate.js";
import type { Queryable } from "./postgres-db.js";
import type { PostgresTarget } from "./target.js";

/** What `arbeit migrate` found and did on a Postgres schema. */
export interface PostgresMigrationStep extends MigrationReport {
  location: string;
  schema: string;
  /** The migrations a dry run would have applied (empty once applied). */
  pending: AppliedMigration[];
}

/**
 * The deliberate step of an upgrade: brings the shared schema to this code's newest version
 * (creating it when there is none), under the schema's write lock, in one transaction. With
 * `dryRun` it only says what it would apply. A schema this code cannot work on (contracted past
 * it) is SCHEMA_TOO_NEW, untouched.
 */
export async function migratePostgres(
  target: PostgresTarget,
  options: { dryRun?: boolean; migrations?: ReturnType<typeof listPostgresMigrations> } = {},
): Promise<PostgresMigrationStep> {
  const schema = checkSchemaName(target.schema ?? DEFAULT_SCHEMA);
  const location = describeLocation(target.url, schema);
  const migrations = options.migrations ?? listPostgresMigrations();
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: target.url, application_name: "arbeit migrate" });
  client.on("error", () => {});
  try {
    await client.connect();
    const queryable = client as unknown as Queryable;
    if (options.dryRun) {
      const state = await schemaState(queryable, schema);
      if (schemaFit(state, migrations.length) === "too_new") throw schemaTooNew(schema, state, migrations.length);
      const from = state.version ?? 0;
      const pending = migrations.slice(from).map((migration) => ({
        version: migration.version,
        name: migration.name,
        kind: migrationKind(migration).kind,
      }));
      return {
        location,
        schema,
        from,
        to: from,
        oldest_compatible: state.oldestCompatible ?? from,
        applied: [],
        pending,
      };
    }
    const report = await applyPostgresMigrations(queryable, schema, advisoryLock(lockKey(schema)), migrations);
    return { location, schema, ...report, pending: [] };
  } catch (error) {
    if (error instanceof ArbeitError) throw error;
    rethrowAsStoreFailure(error, location);
  } finally {
    await client.end().catch(() => {});
  }
}
