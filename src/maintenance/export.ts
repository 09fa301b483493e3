import type { SqlStore } from "../store/sql/database.js";
import { engineOf } from "./engine.js";
import {
  CREDENTIAL_TABLES,
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
 * The credential tables are listed with no rows unless `credentials` asks for a restore's copy.
 */
export async function exportStore(
  store: SqlStore,
  write: (chunk: string) => void | Promise<void>,
  options: { onProgress?: Progress; now?: () => Date; credentials?: boolean } = {},
): Promise<ExportSummary> {
  return store.transaction("read", async (db) => {
    const tables = (await exportTables(db)).map((table) =>
      options.credentials || !CREDENTIAL_TABLES.has(table.name) ? table : { ...table, rows: 0 },
    );
    const header: ExportHeader = {
      format: EXPORT_FORMAT,
      format_version: EXPORT_FORMAT_VERSION,
      schema_version: await engineOf(db).schemaVersion(db),
      exported_at: (options.now?.() ?? new Date()).toISOString(),
      tables: tables.map(describeTable),
    };
    const total = tables.reduce((sum, table) => sum + table.rows, 0);
    let buffer = `${JSON.stringify(header)}\n`;
    let done = 0;
    for (const table of tables) {
      if (table.rows === 0) continue;
      for await (const row of tableRows(db, table)) {
        buffer += `${JSON.stringify(row)}\n`;
        done++;
        if (buffer.length >= FLUSH_BYTES) {
          await write(buffer);
          buffer = "";
          options.onProgress?.(done, total);
        }
      }
    }
    await write(buffer);
    options.onProgress?.(done, total);
    return {
      schema_version: header.schema_version,
      rows: done,
      tables: Object.fromEntries(tables.map((table) => [table.name, table.rows])),
    };
  });
}
