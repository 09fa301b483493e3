import { openProject } from "../../src/service/project.js";

/** The file associations of a task in the project at `dir`, as sorted "path operation session" rows. */
export async function trackedFiles(dir: string, taskId: string): Promise<string[]> {
  const service = await openProject({ cwd: dir });
  try {
    const rows = await service.store.read((tx) => tx.filesOf(taskId));
    return rows.map((row) => `${row.file_path} ${row.operation} ${row.session_id}`).sort();
  } finally {
    await service.close();
  }
}
