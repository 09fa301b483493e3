import { ArbeitError } from "../../domain/errors.js";
import type { TaskStore } from "../task-store.js";
import { isPostgresUrl } from "./config.js";

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

/** Opens (and migrates) the target; the Postgres code and the pg driver load only now. */
export async function openPostgresStore(target: PostgresTarget): Promise<TaskStore> {
  const { PostgresTaskStore } = await import("./postgres-task-store.js");
  return PostgresTaskStore.open(target.url, { schema: target.schema });
}
