import { ArbeitError } from "../../domain/errors.js";
import { readStoreRecord, serviceCheckout } from "../store-record.js";
import type { TaskStore } from "../task-store.js";
import { describeLocation, isPostgresUrl } from "./config.js";

/** A Postgres database to keep a project's tasks in, instead of `.arbeit/arbeit.db`. */
export interface PostgresTarget {
  url: string;
  schema?: string | undefined;
}

/**
 * The Postgres database a project uses, if any: `databaseUrl` or ARBEIT_DATABASE_URL,
 * with `databaseSchema` or ARBEIT_DATABASE_SCHEMA. An explicit SQLite file (--db / ARBEIT_DB)
 * wins over both. undefined means SQLite.
 */
export function postgresTarget(
  options: { db?: string | undefined; databaseUrl?: string | undefined; databaseSchema?: string | undefined },
  env: Record<string, string | undefined> = process.env,
): PostgresTarget | undefined {
  if (options.db) return undefined;
  const url = options.databaseUrl || env.ARBEIT_DATABASE_URL;
  if (!url) return undefined;
  if (!isPostgresUrl(url)) {
    throw new ArbeitError("INVALID_ARGUMENT", "ARBEIT_DATABASE_URL must be a postgres:// or postgresql:// URL.", {
      suggestions: ["Set it like postgres://user:password@host:5432/database, or unset it to use SQLite."],
    });
  }
  return { url, schema: options.databaseSchema || env.ARBEIT_DATABASE_SCHEMA || undefined };
}

/**
 * The Postgres database of the project whose `.arbeit/` folder is `folder`, if it uses one. A
 * checkout whose folder records Postgres never falls back to SQLite: without ARBEIT_DATABASE_URL
 * it is STORE_UNAVAILABLE, and ARBEIT_DATABASE_SCHEMA naming another schema than the recorded one
 * (which is used when it is unset) is refused, since either
 * would write where the project's tasks are not. Without a record, ARBEIT_DATABASE_URL decides,
 * as it did before checkouts kept one. An explicit SQLite file (--db / ARBEIT_DB) wins.
 */
export function projectTarget(
  options: { db?: string | undefined; databaseUrl?: string | undefined; databaseSchema?: string | undefined },
  folder: string,
  env: Record<string, string | undefined> = process.env,
): PostgresTarget | undefined {
  if (options.db) return undefined;
  const target = postgresTarget(options, env);
  const recorded = readStoreRecord(folder);
  if (recorded === undefined) return target;
  // The tasks are behind the service; a local store here would be a second, empty one.
  if (recorded.store === "service") throw serviceCheckout(recorded.url, `recorded in ${folder}`, folder);
  if (target === undefined) {
    throw new ArbeitError(
      "STORE_UNAVAILABLE",
      `This checkout keeps its tasks in Postgres (schema ${recorded.schema}, recorded in ${folder}), but ARBEIT_DATABASE_URL is not set; nothing was read or written.`,
      {
        suggestions: [
          "Set ARBEIT_DATABASE_URL to the team's postgres:// URL in this environment (the shell, the CI job, the agent host's settings) and retry.",
        ],
        details: { path: folder, cause: "database_url_missing", schema: recorded.schema },
      },
    );
  }
  // A teammate needs only the URL: the schema comes from the record.
  const schema = target.schema ?? recorded.schema;
  if (schema !== recorded.schema) {
    throw new ArbeitError(
      "STORE_UNAVAILABLE",
      `This checkout keeps its tasks in the Postgres schema ${recorded.schema} (recorded in ${folder}), but ARBEIT_DATABASE_SCHEMA names ${schema}; nothing was read or written.`,
      {
        suggestions: [`Set ARBEIT_DATABASE_SCHEMA=${recorded.schema}, or unset it, and retry.`],
        details: { path: describeLocation(target.url, schema), cause: "schema_mismatch", schema: recorded.schema },
      },
    );
  }
  return { url: target.url, schema };
}

/**
 * Opens (and migrates) the target; the Postgres code and the pg driver load only now. With
 * `checkSchema: "first-transaction"` the schema is checked with the first transaction instead;
 * `readCommit` as PostgresStoreOptions says.
 */
export async function openPostgresStore(
  target: PostgresTarget,
  options: { checkSchema?: "open" | "first-transaction"; readCommit?: "at-once" | "with-next-transaction" } = {},
): Promise<TaskStore> {
  const { PostgresTaskStore } = await import("./postgres-task-store.js");
  return PostgresTaskStore.open(target.url, { schema: target.schema, ...options });
}
