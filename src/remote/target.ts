import { dirname } from "node:path";
import { isDirectory } from "../service/locate.js";
import { locate } from "../service/project.js";
import { resolveLikeKernel } from "../service/resolve-path.js";
import { readStoreRecord } from "../store/store-record.js";
import { serviceUrl } from "./service-url.js";

/** An `arbeit serve` service a process sends its tool calls to, instead of opening a store. */
export interface ServiceTarget {
  url: string;
  /** The local project root: file paths are made relative to it before they leave the machine. */
  root: string;
  /** Where the URL came from: ARBEIT_URL, or the checkout's `.arbeit/config.json`. */
  from: "ARBEIT_URL" | "record";
  /**
   * The checkout's `.arbeit/` folder, when it has one: where it remembers that the service is
   * away and keeps what hooks could not send (src/remote/service-away.ts, src/remote/outbox.ts).
   */
  folder?: string;
}

/**
 * The service this process uses, if any: ARBEIT_URL, else the service recorded by `arbeit init
 * --server` in the nearest project. An explicit SQLite file (--db / ARBEIT_DB) wins over both,
 * as it wins over Postgres. undefined means a local store.
 */
export function serviceTarget(
  options: { cwd: string; db?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): ServiceTarget | undefined {
  if (options.db) return undefined;
  const location = locate({ cwd: options.cwd });
  const spelled = location?.root ?? options.cwd;
  // The real root, as the local service takes it, so that it compares with resolved paths.
  const root = resolveLikeKernel(spelled) ?? spelled;
  const fromEnv = env.ARBEIT_URL || undefined;
  const folder = location && isDirectory(dirname(location.dbPath)) ? { folder: dirname(location.dbPath) } : {};
  if (fromEnv !== undefined) return { url: serviceUrl(fromEnv, "ARBEIT_URL"), root, from: "ARBEIT_URL", ...folder };
  if (location === undefined) return undefined;
  const record = readStoreRecord(dirname(location.dbPath));
  if (record?.store !== "service") return undefined;
  return {
    url: serviceUrl(record.url, `The service recorded in ${dirname(location.dbPath)}`),
    root,
    from: "record",
    ...folder,
  };
}
