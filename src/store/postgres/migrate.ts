import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ArbeitError } from "../../domain/errors.js";
import { listMigrations, type Migration } from "../sqlite/migrate.js";
import type { Queryable } from "./postgres-db.js";

/** Migrations live beside the package (migrations/postgres/NNNN_name.sql), numbered like SQLite's. */
export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL("../../../migrations/postgres/", import.meta.url));

/** Records the applied migrations; the highest version is the schema version. */
const VERSION_TABLE = `CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

export function listPostgresMigrations(): Migration[] {
  return listMigrations(POSTGRES_MIGRATIONS_DIR);
}

/**
 * Brings `schema` to the newest version in one transaction, under the store's write lock
 * (`lockSql` takes it): machines opening a fresh database at once apply each migration exactly
 * once, and writers wait for the migration rather than meet a half-built schema. DDL is
 * transactional in Postgres, so a failure leaves the schema as it was. A schema newer than this
 * code is SCHEMA_TOO_NEW, never a silent downgrade.
 */
export async function applyPostgresMigrations(
  client: Queryable,
  schema: string,
  lockSql: string,
  migrations: Migration[] = listPostgresMigrations(),
): Promise<number> {
  const quoted = `"${schema}"`;
  const latest = migrations.length;
  // A schema already up to date needs no lock: a reader must not wait behind a long write (an
  // import holds the write lock for its whole transaction).
  const settled = await currentVersion(client, schema);
  if (settled !== undefined && settled >= latest) {
    if (settled > latest) throw schemaTooNew(quoted, settled, latest);
    return latest;
  }
  await client.query(`BEGIN; ${lockSql}`);
  try {
    // Checked before creating so that a role without CREATE can use a schema its DBA made.
    const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (exists.rows.length === 0) await client.query(`CREATE SCHEMA ${quoted}`);
    await client.query(`SET LOCAL search_path TO ${quoted}`);
    if ((await currentVersion(client, schema)) === undefined) {
      // A schema that already holds tables but no migration table of ours is another
      // application's: Arbeit's tables would be mixed into it.
      const held = await client.query(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY c.relname LIMIT 3",
        [schema],
      );
      if (held.rows.length > 0) {
        throw foreignSchema(
          schema,
          held.rows.map((row) => String(row.relname)),
        );
      }
      await client.query(VERSION_TABLE);
    }
    const current = (await currentVersion(client, schema)) ?? 0;
    if (current > latest) throw schemaTooNew(quoted, current, latest);
    for (const migration of migrations.slice(current)) {
      await client.query(readFileSync(migration.path, "utf8"));
      await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        migration.version,
        migration.name,
        new Date().toISOString(),
      ]);
    }
    // Fresh statistics for every table a migration touched: the planner otherwise guesses, and a
    // guess made for an empty or reshaped table once made `ready` take tens of seconds.
    if (current < latest) await analyzeSchema(client, schema);
    await client.query("COMMIT");
    return latest;
  } catch (error) {
    // The migration's own error is the one worth reporting, even if the connection is gone.
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/** The version table, whether it is Arbeit's, and its highest version, in one statement. */
const VERSION_QUERY = `SELECT to_regclass($1) IS NOT NULL AS present, ours,
    CASE WHEN ours THEN (xpath('/row/v/text()',
      query_to_xml('SELECT COALESCE(MAX(version), 0) AS v FROM ' || $1, false, true, '')))[1]::text::int END AS version,
    to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now
  FROM (SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'applied_at'
    AND NOT attisdropped) AS ours) AS t`;

/**
 * The schema's version, or undefined when it has no version table yet, and the server's time as
 * it answered. A `schema_migrations` that is not Arbeit's (another tool's, without `applied_at`) is
 * refused, not read as a version.
 */
export async function schemaVersion(
  client: Queryable,
  schema: string,
): Promise<{ version: number | undefined; serverTime: string }> {
  const row = (await client.query(VERSION_QUERY, [`"${schema}".schema_migrations`])).rows[0]!;
  const serverTime = String(row.now);
  if (row.present !== true) return { version: undefined, serverTime };
  if (row.ours !== true) throw foreignSchema(schema, ["schema_migrations"]);
  return { version: Number(row.version ?? 0), serverTime };
}

async function currentVersion(client: Queryable, schema: string): Promise<number | undefined> {
  return (await schemaVersion(client, schema)).version;
}

function foreignSchema(schema: string, tables: string[]): ArbeitError {
  return new ArbeitError(
    "INVALID_ARGUMENT",
    `The Postgres schema ${schema} already holds tables that are not Arbeit's (${tables.join(", ")}${tables.length >= 3 ? ", ..." : ""}); Arbeit will not add its own to them. Nothing was created.`,
    {
      suggestions: ["Set ARBEIT_DATABASE_SCHEMA to a schema of Arbeit's own (a new or empty one), e.g. arbeit."],
      details: { schema, cause: "foreign_schema" },
    },
  );
}

function schemaTooNew(quoted: string, current: number, latest: number): ArbeitError {
  return new ArbeitError(
    "SCHEMA_TOO_NEW",
    `The Postgres schema ${quoted} is at version ${current}, but this Arbeit only knows up to ${latest}.`,
    { details: { database_version: current, supported_version: latest } },
  );
}

/** ANALYZE every table of `schema` (after a migration or an import). */
export async function analyzeSchema(client: Queryable, schema: string): Promise<void> {
  const tables = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [
    schema,
  ]);
  const names = tables.rows.map((row) => `"${schema}"."${String(row.tablename).replaceAll('"', '""')}"`);
  if (names.length > 0) await client.query(`ANALYZE ${names.join(", ")}`);
}
