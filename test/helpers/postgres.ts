import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { analyzeSchema, listPostgresMigrations } from "../../src/store/postgres/migrate.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import { requirement } from "./requirements.js";

/**
 * The Postgres the tests use: ARBEIT_TEST_DATABASE_URL, else the local server docs/postgres.md describes
 * (127.0.0.1:5432, trust auth, database `test`). Every test gets its own schema, dropped after.
 */
export const TEST_DATABASE_URL = process.env.ARBEIT_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

let reachable: Promise<string | undefined> | undefined;

/** undefined when Postgres answers; otherwise why not. Asked once per process. */
function unreachableReason(): Promise<string | undefined> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3000 });
    client.on("error", () => {});
    try {
      await client.connect();
      await client.query("SELECT 1");
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return reachable;
}

/**
 * The `skip` option for a Postgres suite: false when Postgres is up. When it is down the suite is
 * skipped with a visible reason on a developer's machine, but under CI=true it fails instead:
 * CI must never pass by skipping.
 */
export async function postgresSkip(): Promise<string | false> {
  const reason = await unreachableReason();
  return requirement(
    "the Postgres tests",
    reason === undefined
      ? undefined
      : `Postgres is not reachable at ${TEST_DATABASE_URL} (${reason}); start it (docs/postgres.md) or set ARBEIT_TEST_DATABASE_URL`,
  );
}

let counter = 0;

/** A schema name no other test (in this or another process) uses. */
export function uniqueSchema(prefix = "arbeit_test"): string {
  const random = Math.random().toString(36).slice(2, 8);
  return `${prefix}_${process.pid}_${++counter}_${random}`;
}

/** Runs SQL on a short-lived connection of its own (for setup and clean-up, never the code under test). */
export async function adminQuery(sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/**
 * A schema no other test uses, already at the newest version: a copy of one schema migrated once
 * (per set of migrations, cached in the temp folder as pg_dump's SQL), replayed in one round
 * trip. Migrating a schema costs about twice the copy, and most Postgres tests start with a fresh
 * one; a test whose subject is the migration itself (or an empty or foreign schema) takes
 * uniqueSchema and lets the store migrate. Where pg_dump is missing the schema is migrated here.
 */
export async function migratedSchema(prefix = "arbeit_test"): Promise<string> {
  const schema = uniqueSchema(prefix);
  await createMigratedSchema(schema);
  return schema;
}

/** Makes `schema` (a name from uniqueSchema) as migratedSchema does. */
export async function createMigratedSchema(schema: string): Promise<void> {
  const template = await schemaTemplate();
  if (template === undefined) {
    await (await PostgresTaskStore.open(TEST_DATABASE_URL, { schema })).close();
    return;
  }
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    // Fresh statistics, as after a migration: the planner's guesses for tables it never analysed differ.
    await client.query(`BEGIN; ${template.sql.replaceAll(template.name, schema)}; COMMIT`);
    await analyzeSchema(client, schema);
  } finally {
    await client.end();
  }
}

let template: Promise<{ name: string; sql: string } | undefined> | undefined;

function schemaTemplate(): Promise<{ name: string; sql: string } | undefined> {
  template ??= (async () => {
    const migrations = listPostgresMigrations();
    const hash = createHash("sha256");
    // The way the copy is made is part of the key: a copy made otherwise is made again.
    hash.update(inCreationOrder.toString());
    for (const migration of migrations) hash.update(readFileSync(migration.path));
    const name = `arbeit_template_${hash.digest("hex").slice(0, 16)}`;
    const file = join(tmpdir(), `${name}.sql`);
    if (existsSync(file)) return { name, sql: readFileSync(file, "utf8") };
    // Made under a name of this process's own, so that files starting at once never share one.
    const own = `${name}_${process.pid}`;
    await (await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: own })).close();
    try {
      const created = await adminQuery(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.oid`,
        [own],
      );
      const dump = spawnSync(
        "pg_dump",
        ["--dbname", TEST_DATABASE_URL, "--schema", own, "--no-owner", "--no-privileges", "--inserts"],
        { encoding: "utf8", timeout: 60_000 },
      );
      if (dump.status !== 0) return undefined;
      // psql's meta-commands (\restrict) are not SQL.
      const text = dump.stdout
        .split("\n")
        .filter((line) => !line.startsWith("\\"))
        .join("\n");
      const sql = inCreationOrder(
        text,
        created.rows.map((row) => String(row.name)),
      ).replaceAll(own, name);
      writeFileSync(`${file}.${process.pid}`, sql);
      renameSync(`${file}.${process.pid}`, file);
      return { name, sql };
    } finally {
      await dropSchema(own);
    }
  })();
  return template;
}

/**
 * pg_dump creates tables in the order of their names; the copy creates them in the order the
 * migrations did, because Arbeit reads a schema's tables in creation order (its export lists them
 * so, parents before the rows that point at them). Each table moves with the sequences pg_dump
 * writes right after it.
 */
function inCreationOrder(dump: string, tables: string[]): string {
  const blocks = dump.split(/(?=^--\n-- Name: )/m);
  const type = (block: string) => /^-- Name: (\S+); Type: ([A-Z ]+);/m.exec(block);
  const first = blocks.findIndex((block) => type(block)?.[2] === "TABLE");
  if (first < 0) return dump;
  let end = first;
  while (end < blocks.length && ["TABLE", "SEQUENCE", "SEQUENCE OWNED BY"].includes(type(blocks[end]!)?.[2] ?? ""))
    end++;
  const groups: Array<{ table: string; blocks: string[] }> = [];
  for (const block of blocks.slice(first, end)) {
    const [, name, kind] = type(block)!;
    if (kind === "TABLE") groups.push({ table: name!, blocks: [block] });
    else groups.at(-1)!.blocks.push(block);
  }
  const rank = (table: string) => (tables.includes(table) ? tables.indexOf(table) : tables.length);
  groups.sort((a, b) => rank(a.table) - rank(b.table));
  return [...blocks.slice(0, first), ...groups.flatMap((group) => group.blocks), ...blocks.slice(end)].join("");
}
