import pg from "pg";
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
