import { schemaVersion } from "../store/sqlite/migrate.js";
import type { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";
import {
  describeTable,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type ExportHeader,
  exportTables,
  tableRows,
} from "./export-format.js";

export type Progress = (done: number, total: number) => void;

export interface ExportSummary {
  schema_version: number;
  rows: number;
  tables: Record<string, number>;
}

const FLUSH_BYTES = 1 << 16;

/**
 * Writes every table of the store as JSON Lines to `write`, from one consistent snapshot:
 * writers in other processes carry on, and the export shows the store as it was at the start.
 */
export async function exportStore(
  store: SqliteTaskStore,
  write: (chunk: string) => void,
  options: { onProgress?: Progress; now?: () => Date } = {},
): Promise<ExportSummary> {
  const driver = store.driver;
  return store.read(async () => {
    const tables = exportTables(driver);
    const header: ExportHeader = {
      format: EXPORT_FORMAT,
      format_version: EXPORT_FORMAT_VERSION,
      schema_version: schemaVersion(driver),
      exported_at: (options.now?.() ?? new Date()).toISOString(),
      tables: tables.map(describeTable),
    };
    const total = tables.reduce((sum, table) => sum + table.rows, 0);
    let buffer = `${JSON.stringify(header)}\n`;
    let done = 0;
    for (const table of tables) {
      for (const row of tableRows(driver, table)) {
        buffer += `${JSON.stringify(row)}\n`;
        done++;
        if (buffer.length >= FLUSH_BYTES) {
          write(buffer);
          buffer = "";
          options.onProgress?.(done, total);
        }
      }
    }
    write(buffer);
    options.onProgress?.(done, total);
    return {
      schema_version: header.schema_version,
      rows: done,
      tables: Object.fromEntries(tables.map((table) => [table.name, table.rows])),
    };
  });
}
