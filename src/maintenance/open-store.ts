import { locate, notInitialized } from "../service/project.js";
import { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";

/**
 * Opens the project's store for a maintenance command: found like every other command (nearest
 * `.arbeit/`, or --db / ARBEIT_DB), migrated on open, NOT_INITIALIZED when there is none.
 */
export async function openProjectStore(options: { cwd: string; db?: string | undefined }): Promise<SqliteTaskStore> {
  const location = locate(options);
  if (!location) throw notInitialized(options);
  return SqliteTaskStore.open(location.dbPath);
}
