import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { STORE_RECORD_FILE } from "../domain/project-layout.js";

/**
 * Which store a checkout uses, kept in `.arbeit/config.json` by `arbeit init` when it is not the
 * SQLite file beside it: a process started without ARBEIT_DATABASE_URL (a teammate's shell, a CI
 * job, an agent host) must not quietly make an empty SQLite store instead. The URL, credentials
 * and all, stays in the environment; only the schema is recorded. No file means SQLite.
 */
export interface StoreRecord {
  store: "postgres";
  schema: string;
}

/** The record in the `.arbeit/` folder `folder`, or undefined when there is none. */
export function readStoreRecord(folder: string): StoreRecord | undefined {
  const path = join(folder, STORE_RECORD_FILE);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return undefined;
  const damaged = (why: string) =>
    new ArbeitError("STORE_DAMAGED", `${path} ${why}, so which store this checkout uses is unknown.`, {
      suggestions: [`Write it again as {"store": "postgres", "schema": "<schema>"} for a checkout on Postgres.`],
      details: { path, cause: "store_record" },
    });
  // Reading a FIFO would wait for a writer forever.
  if (!stats.isFile()) throw damaged("is not a regular file");
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw damaged("is not valid JSON");
  }
  const record = parsed as Partial<StoreRecord> | null;
  if (record?.store !== "postgres" || typeof record.schema !== "string") {
    throw damaged('does not name a store ({"store": "postgres", "schema": "..."})');
  }
  return { store: "postgres", schema: record.schema };
}

export function writeStoreRecord(folder: string, record: StoreRecord): void {
  writeFileSync(join(folder, STORE_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
}
