import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { STORE_RECORD_FILE } from "../domain/project-layout.js";
import { readServiceFile } from "./service-file.js";

/**
 * Which store a checkout uses, kept in `.arbeit/config.json` by `arbeit init` when it is not the
 * SQLite file beside it: a process started without ARBEIT_DATABASE_URL (a teammate's shell, a CI
 * job, an agent host) must not quietly make an empty SQLite store instead. For Postgres the URL,
 * credentials and all, stays in the environment; only the schema is recorded. For an `arbeit
 * serve` service (`arbeit init --server URL`) its URL is recorded, never a token: tokens live in
 * the user's own config (docs/team.md). No file means SQLite.
 */
export type StoreRecord =
  | { store: "postgres"; schema: string }
  | {
      store: "service";
      url: string;
      /** The CA file the project names for the service (absolute), if any. */
      ca?: string | undefined;
      /** The file that names the service: the committed `.arbeit/service.json`, or this checkout's `config.json`. */
      file?: string | undefined;
    };

/**
 * The record in the `.arbeit/` folder `folder`, or undefined when there is none. The service the
 * project commits (`.arbeit/service.json`) comes first: it is what every clone of it uses.
 */
export function readStoreRecord(folder: string): StoreRecord | undefined {
  const committed = readServiceFile(folder);
  if (committed !== undefined) return { store: "service", url: committed.url, ca: committed.ca, file: committed.path };
  const path = join(folder, STORE_RECORD_FILE);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return undefined;
  const damaged = (why: string) =>
    new ArbeitError("STORE_DAMAGED", `${path} ${why}, so which store this checkout uses is unknown.`, {
      suggestions: [
        `Write it again as {"store": "postgres", "schema": "<schema>"} for a checkout on Postgres, or {"store": "service", "url": "<url>"} for one that uses an Arbeit service.`,
      ],
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
  const record = parsed as { store?: unknown; schema?: unknown; url?: unknown } | null;
  if (record?.store === "postgres" && typeof record.schema === "string")
    return { store: "postgres", schema: record.schema };
  if (record?.store === "service" && typeof record.url === "string")
    return { store: "service", url: record.url, file: path };
  throw damaged('does not name a store ({"store": "postgres", "schema": "..."} or {"store": "service", "url": "..."})');
}

export function writeStoreRecord(folder: string, record: { store: "postgres"; schema: string }): void {
  writeFileSync(join(folder, STORE_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/**
 * A command that works on a local store, in a process that uses an Arbeit service (`where`: how
 * it was told, the record or ARBEIT_URL). Hooks stay silent on it (its cause), as outside a project.
 */
export function serviceCheckout(url: string, where: string, path: string): ArbeitError {
  return new ArbeitError(
    "STORE_UNAVAILABLE",
    `This checkout uses the Arbeit service at ${url} (${where}) and has no store of its own; nothing was read or written.`,
    {
      suggestions: [
        "Tool commands (arbeit call, arbeit task ..., arbeit batch, arbeit mcp) go to the service; run commands that work on a store where the service runs.",
      ],
      details: { path, cause: "service_checkout", url },
    },
  );
}
