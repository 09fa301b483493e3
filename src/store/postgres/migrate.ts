import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ArbeitError } from "../../domain/errors.js";
import { listMigrations, type Migration } from "../sqlite/migrate.js";
import type { Queryable } from "./postgres-db.js";

/** Migrations live beside the package (migrations/postgres/NNNN_name.sql), numbered like SQLite's. */
export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL("../../../migrations/postgres/", import.meta.url));

/**
 * The log releases up to schema 14 read: the highest version in it is the schema's version to
 * them, and any version above their own newest migration makes them refuse the store
 * (SCHEMA_TOO_NEW). Migrations 1 to 14 are recorded here; a later one only when it is a contract
 * that those releases cannot work with, so that they refuse it.
 */
const VERSION_TABLE = `CREATE TABLE schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

/** The newest migration releases that know only schema_migrations were written for. */
export const LEGACY_LAST = 14;

/**
 * The log of every migration after LEGACY_LAST, with its kind and the oldest schema version whose
 * code still works on the store once it is applied. Older releases do not read it: they keep
 * working on a store it has grown in. A statement-level trigger keeps an older release's
 * `import --replace`, which takes every table but schema_migrations for data, from emptying it.
 */
const CHANGES_TABLE = `CREATE TABLE IF NOT EXISTS schema_changes (
  version           INTEGER PRIMARY KEY,
  name              TEXT NOT NULL,
  kind              TEXT NOT NULL CHECK (kind IN ('expand', 'contract')),
  oldest_compatible INTEGER NOT NULL,
  applied_at        TEXT NOT NULL
);
CREATE OR REPLACE FUNCTION schema_changes_kept() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
  RAISE EXCEPTION 'schema_changes is Arbeit''s record of its migrations, not data; nothing was changed. Run export, import and backup with the Arbeit release that migrated this schema (or a newer one).';
END
$body$;
DROP TRIGGER IF EXISTS schema_changes_kept ON schema_changes;
CREATE TRIGGER schema_changes_kept BEFORE DELETE OR TRUNCATE ON schema_changes
  FOR EACH STATEMENT EXECUTE FUNCTION schema_changes_kept()`;

/** Tables of Arbeit's own bookkeeping, never data to export, import or count. */
export const BOOKKEEPING_TABLES = ["schema_migrations", "schema_changes"] as const;

export function listPostgresMigrations(): Migration[] {
  return listMigrations(POSTGRES_MIGRATIONS_DIR);
}

/**
 * What a migration does to the code already running: an expand only adds (tables, nullable or
 * defaulted columns, indexes, triggers that keep new columns filled), so every release that
 * worked on the store before keeps working; a contract removes or changes what older releases
 * read or write, and names the oldest schema version whose code still works after it.
 */
export interface MigrationKind {
  kind: "expand" | "contract";
  /** For a contract: the oldest schema version whose code works on the store after it. */
  oldestCompatible?: number;
}

const EXPAND_LINE = /^-- expand: \S/;
const CONTRACT_LINE = /^-- contract \(oldest compatible: (\d+)\): \S/;

/**
 * A migration's kind, from its file's first line: `-- expand: <why older releases keep
 * working>` or `-- contract (oldest compatible: N): <what it removes>`. Migrations up to
 * LEGACY_LAST predate the rule and carry no such line. Any other first line of a later migration
 * is refused: whether older releases survive it must be said, not guessed.
 */
export function migrationKind(migration: Migration): MigrationKind {
  const first = readFileSync(migration.path, "utf8").split("\n", 1)[0] ?? "";
  if (EXPAND_LINE.test(first)) return { kind: "expand" };
  const contract = CONTRACT_LINE.exec(first);
  if (contract) {
    const oldestCompatible = Number(contract[1]);
    if (oldestCompatible > migration.version)
      throw new Error(
        `Migration ${migration.name} says the oldest compatible schema is ${oldestCompatible}, above its own version.`,
      );
    return { kind: "contract", oldestCompatible };
  }
  if (migration.version <= LEGACY_LAST) return { kind: "contract", oldestCompatible: migration.version };
  throw new Error(
    `Migration ${migration.name} does not say its kind: its first line must be "-- expand: <why older releases keep working>" or "-- contract (oldest compatible: N): <what it removes>" (docs/contributing.md).`,
  );
}

/**
 * Where a schema stands, read in one statement: its version (the newest migration applied, in
 * either log), the oldest schema version whose code works on it, and the server's time as it
 * answered. version is undefined when it has no migration log yet.
 */
export interface SchemaState {
  version: number | undefined;
  oldestCompatible: number | undefined;
  serverTime: string;
}

/** How a schema fits code whose newest migration is `latest`. */
export type SchemaFit = "fresh" | "current" | "behind" | "too_new";

/**
 * "current" includes a schema newer than the code whose newer migrations are all expands (or
 * contracts whose oldest compatible version the code reaches): the code keeps working on it.
 * "behind" is a schema some of whose tables or columns the code would miss.
 */
export function schemaFit(state: Pick<SchemaState, "version" | "oldestCompatible">, latest: number): SchemaFit {
  if (!state.version) return "fresh";
  if ((state.oldestCompatible ?? state.version) > latest) return "too_new";
  if (state.version < latest) return "behind";
  return "current";
}

/**
 * Brings `schema` to the newest version in one transaction, under the store's write lock
 * (`lockSql` takes it): machines opening a fresh database at once apply each migration exactly
 * once, and writers wait for the migration rather than meet a half-built schema. DDL is
 * transactional in Postgres, so a failure leaves the schema as it was. A schema this code cannot
 * work on is SCHEMA_TOO_NEW, never a silent downgrade. Without `upgrade`, only a fresh schema is
 * migrated (nobody uses it yet); one that is behind is SCHEMA_TOO_OLD, left as it is.
 */
export async function applyPostgresMigrations(
  client: Queryable,
  schema: string,
  lockSql: string,
  migrations: Migration[] = listPostgresMigrations(),
  options: { upgrade?: boolean } = {},
): Promise<MigrationReport> {
  const upgrade = options.upgrade ?? true;
  const latest = migrations.length;
  // A schema already up to date needs no lock: a reader must not wait behind a long write (an
  // import holds the write lock for its whole transaction).
  const settled = await schemaState(client, schema);
  const fit = schemaFit(settled, latest);
  if (fit === "current") return report(settled, settled, []);
  if (fit === "too_new") throw schemaTooNew(schema, settled, latest);
  if (fit === "behind" && !upgrade) throw schemaTooOld(schema, settled.version!, latest);
  // Read before anything is written: a later migration that does not say its kind stops them all.
  const kinds = migrations.map((migration) => migrationKind(migration));
  await client.query(`BEGIN; ${lockSql}`);
  try {
    // Checked before creating so that a role without CREATE can use a schema its DBA made.
    const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    if (exists.rows.length === 0) await client.query(`CREATE SCHEMA "${schema}"`);
    await client.query(`SET LOCAL search_path TO "${schema}"`);
    if ((await schemaState(client, schema)).version === undefined) {
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
    const before = await schemaState(client, schema);
    const now = schemaFit(before, latest);
    if (now === "too_new") throw schemaTooNew(schema, before, latest);
    // Another process may have got here first: what it left is judged as at the start.
    if (now === "behind" && !upgrade) throw schemaTooOld(schema, before.version!, latest);
    const current = before.version ?? 0;
    let oldest = before.oldestCompatible ?? 0;
    const applied: AppliedMigration[] = [];
    for (const migration of migrations.slice(current)) {
      const { kind, oldestCompatible } = kinds[migration.version - 1]!;
      await client.query(readFileSync(migration.path, "utf8"));
      const at = new Date().toISOString();
      if (migration.version <= LEGACY_LAST) {
        oldest = migration.version;
        await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
          migration.version,
          migration.name,
          at,
        ]);
      } else {
        if (kind === "contract") oldest = Math.max(oldest, oldestCompatible!);
        await client.query(CHANGES_TABLE);
        await client.query(
          "INSERT INTO schema_changes (version, name, kind, oldest_compatible, applied_at) VALUES ($1, $2, $3, $4, $5)",
          [migration.version, migration.name, kind, oldest, at],
        );
        // Releases that read only schema_migrations must refuse a store they no longer work on.
        if (oldest > LEGACY_LAST)
          await client.query(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3) ON CONFLICT (version) DO NOTHING",
            [migration.version, migration.name, at],
          );
      }
      applied.push({ version: migration.version, name: migration.name, kind });
    }
    // Fresh statistics for every table a migration touched: the planner otherwise guesses, and a
    // guess made for an empty or reshaped table once made `ready` take tens of seconds.
    if (applied.length > 0) await analyzeSchema(client, schema);
    await client.query("COMMIT");
    return report(before, { version: Math.max(current, latest), oldestCompatible: oldest }, applied);
  } catch (error) {
    // The migration's own error is the one worth reporting, even if the connection is gone.
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

export interface AppliedMigration {
  version: number;
  name: string;
  kind: "expand" | "contract";
}

/** What a migration step found and did. */
export interface MigrationReport {
  /** The schema's version before (0: it had none). */
  from: number;
  to: number;
  /** The oldest schema version whose code works on the store now. */
  oldest_compatible: number;
  applied: AppliedMigration[];
}

function report(
  before: Pick<SchemaState, "version">,
  after: Pick<SchemaState, "version" | "oldestCompatible">,
  applied: AppliedMigration[],
): MigrationReport {
  return {
    from: before.version ?? 0,
    to: after.version ?? 0,
    oldest_compatible: after.oldestCompatible ?? after.version ?? 0,
    applied,
  };
}

/**
 * The version table, whether it is Arbeit's, its highest version, and the change log's highest
 * version and oldest compatible version when it has one, in one statement. The tables are named
 * as text, so that a schema without them is read, not an error.
 */
const STATE_QUERY = `SELECT to_regclass($1) IS NOT NULL AS present, ours,
    CASE WHEN ours THEN (xpath('/row/v/text()',
      query_to_xml('SELECT COALESCE(MAX(version), 0) AS v FROM ' || $1, false, true, '')))[1]::text::int END AS version,
    CASE WHEN ours AND to_regclass($2) IS NOT NULL THEN (xpath('/row/v/text()',
      query_to_xml('SELECT MAX(version) AS v FROM ' || $2, false, true, '')))[1]::text::int END AS changed,
    CASE WHEN ours AND to_regclass($2) IS NOT NULL THEN (xpath('/row/c/text()',
      query_to_xml('SELECT MAX(oldest_compatible) AS c FROM ' || $2, false, true, '')))[1]::text::int END AS oldest,
    to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS now
  FROM (SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'applied_at'
    AND NOT attisdropped) AS ours) AS t`;

/**
 * The schema's state (see SchemaState). A `schema_migrations` that is not Arbeit's (another
 * tool's, without `applied_at`) is refused, not read as a version.
 */
export async function schemaState(client: Queryable, schema: string): Promise<SchemaState> {
  const row = (await client.query(STATE_QUERY, [`"${schema}".schema_migrations`, `"${schema}".schema_changes`]))
    .rows[0]!;
  const serverTime = String(row.now);
  if (row.present !== true) return { version: undefined, oldestCompatible: undefined, serverTime };
  if (row.ours !== true) throw foreignSchema(schema, ["schema_migrations"]);
  const legacy = Number(row.version ?? 0);
  const changed = row.changed === null || row.changed === undefined ? undefined : Number(row.changed);
  if (changed === undefined) return { version: legacy, oldestCompatible: legacy, serverTime };
  return { version: Math.max(legacy, changed), oldestCompatible: Number(row.oldest), serverTime };
}

/**
 * The statement a transaction sends in place of the schema check (see PostgresTaskStore): it
 * fails unless the schema fits code whose newest migration is `latest` ("current" above). Code
 * at or below LEGACY_LAST reads schema_migrations, which a later migration enters only when it
 * is a contract past that code; later code reads the change log.
 */
export function schemaFitCondition(latest: number): string {
  return latest <= LEGACY_LAST
    ? `(SELECT MAX(version) FROM schema_migrations WHERE applied_at IS NOT NULL) = ${latest}`
    : `(SELECT MAX(version) >= ${latest} AND MAX(oldest_compatible) <= ${latest} FROM schema_changes)`;
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

export function schemaTooNew(schema: string, state: Pick<SchemaState, "version" | "oldestCompatible">, latest: number) {
  const version = state.version ?? 0;
  const oldest = state.oldestCompatible ?? version;
  return new ArbeitError(
    "SCHEMA_TOO_NEW",
    oldest < version
      ? `The Postgres schema "${schema}" is at version ${version} and was migrated past this Arbeit: it works with Arbeit that knows schema version ${oldest} or later, and this one knows up to ${latest}.`
      : `The Postgres schema "${schema}" is at version ${version}, but this Arbeit only knows up to ${latest}.`,
    { details: { database_version: version, supported_version: latest, oldest_compatible: oldest } },
  );
}

export function schemaTooOld(schema: string, version: number, latest: number): ArbeitError {
  return new ArbeitError(
    "SCHEMA_TOO_OLD",
    `The Postgres schema "${schema}" is at version ${version}, and this Arbeit needs version ${latest}. A shared store is migrated by one deliberate step, never by a teammate's call: whoever administers it runs \`arbeit migrate\` with this release (or restarts \`arbeit serve\` with it). Nothing was read or written.`,
    {
      details: { database_version: version, required_version: latest, schema, cause: "schema_behind" },
    },
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
