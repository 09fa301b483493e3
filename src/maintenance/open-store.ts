import { dirname } from "node:path";
import { locate, notInitialized } from "../service/project.js";
import { projectTarget } from "../store/postgres/target.js";
import { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";
import type { MaintainedStore } from "./doctor.js";

/**
 * Opens the project's store for a maintenance command: found like every other command (nearest
 * `.arbeit/`, or --db / ARBEIT_DB; ARBEIT_DATABASE_URL for a shared Postgres database, required when
 * the checkout records one), migrated
 * on open, NOT_INITIALIZED when there is none.
 */
export async function openProjectStore(options: { cwd: string; db?: string | undefined }): Promise<MaintainedStore> {
  const location = locate(options);
  if (!location) throw notInitialized(options);
  const postgres = projectTarget(options, dirname(location.dbPath));
  if (postgres) {
    const { PostgresTaskStore } = await import("../store/postgres/postgres-task-store.js");
    return PostgresTaskStore.open(postgres.url, { schema: postgres.schema });
  }
  return SqliteTaskStore.open(location.dbPath, { existing: true });
}
