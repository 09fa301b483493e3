import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { applyPostgresMigrations, listPostgresMigrations } from "../../src/store/postgres/migrate.js";
import type { Migration } from "../../src/store/sqlite/migrate.js";
import { adminQuery, TEST_DATABASE_URL } from "../helpers/postgres.js";

/** A project folder whose processes use `schema` on the test database (no `arbeit init`: it may be refused). */
export function postgresCheckout(dir: string, schema: string): Record<string, string> {
  mkdirSync(join(dir, ".arbeit"), { recursive: true });
  return { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema };
}

/** Migrates `schema` (made if missing) with `migrations`, as the release that has exactly those would. */
export async function migrateWith(schema: string, migrations: Migration[]): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await applyPostgresMigrations(client, schema, "", migrations);
  } finally {
    await client.end();
  }
}

/**
 * The migrations of a release after this one: this code's, then `later` (SQL files written into
 * `dir`, numbered on from this code's newest), as a newer Arbeit would ship them.
 */
export function laterRelease(dir: string, later: Array<{ name: string; sql: string }>): Migration[] {
  const own = listPostgresMigrations();
  mkdirSync(dir, { recursive: true });
  return [
    ...own,
    ...later.map(({ name, sql }, i) => {
      const version = own.length + i + 1;
      const file = `${String(version).padStart(4, "0")}_${name}.sql`;
      writeFileSync(join(dir, file), sql);
      return { version, name: file, path: join(dir, file) };
    }),
  ];
}

/**
 * An expand a later release might ship: a table of its own, and a column older code neither reads
 * nor writes (nullable, with a default, so an older release's inserts still succeed).
 */
export const LATER_EXPAND = {
  name: "later_expand",
  sql: `-- expand: a new table and a defaulted column; nothing older releases read or write changes
CREATE TABLE later_notes (
  id   TEXT COLLATE "C" PRIMARY KEY,
  body TEXT COLLATE "C" NOT NULL
);
ALTER TABLE tasks ADD COLUMN later_flag TEXT COLLATE "C" DEFAULT 'none';
`,
};

/** A contract of a still later release: it drops a column every release up to this one writes. */
export function laterContract(oldestCompatible: number) {
  return {
    name: "later_contract",
    sql: `-- contract (oldest compatible: ${oldestCompatible}): tasks.risk is gone; releases before ${oldestCompatible} write it
ALTER TABLE tasks DROP COLUMN risk;
`,
  };
}

export async function versionsOf(schema: string): Promise<{ legacy: number; changes: number[] }> {
  const legacy = Number(
    (await adminQuery(`SELECT MAX(version) AS v FROM "${schema}".schema_migrations`)).rows[0].v ?? 0,
  );
  const exists = (await adminQuery("SELECT to_regclass($1) IS NOT NULL AS e", [`"${schema}".schema_changes`])).rows[0]
    .e;
  const changes = exists
    ? (await adminQuery(`SELECT version FROM "${schema}".schema_changes ORDER BY version`)).rows.map((r) =>
        Number(r.version),
      )
    : [];
  return { legacy, changes };
}
