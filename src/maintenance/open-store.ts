import { ArbeitError } from "../domain/errors.js";
import { locate, notInitialized } from "../service/project.js";
import { postgresTarget } from "../store/postgres/target.js";
import { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";

/**
 * Opens the project's store for a maintenance command: found like every other command (nearest
 * `.arbeit/`, or --db / ARBEIT_DB), migrated on open, NOT_INITIALIZED when there is none.
 */
export async function openProjectStore(options: { cwd: string; db?: string | undefined }): Promise<SqliteTaskStore> {
  // These commands work on the SQLite file; with a shared Postgres database they would quietly
  // check or copy an empty local file instead.
  if (postgresTarget(options)) {
    throw new ArbeitError(
      "INVALID_ARGUMENT",
      "doctor, backup, export and import work on SQLite stores; this project uses Postgres (ARBEIT_DATABASE_URL).",
      {
        suggestions: [
          "Use Postgres's own tools (pg_dump, pg_restore) for a Postgres store, or pass --db <file> for a SQLite one.",
        ],
      },
    );
  }
  const location = locate(options);
  if (!location) throw notInitialized(options);
  return SqliteTaskStore.open(location.dbPath);
}
