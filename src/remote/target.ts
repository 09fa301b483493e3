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
  /** Where the URL came from: ARBEIT_URL, or the project's `.arbeit/service.json` (or the checkout's `config.json`). */
  from: "ARBEIT_URL" | "record";
  /** The file that names the service, when `from` is "record". */
  file?: string | undefined;
  /** The CA file that signed the service's certificate, as the project names it (src/remote/trust.ts). */
  ca?: string | undefined;
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
  const recorded = () => {
    const record = location === undefined ? undefined : readStoreRecord(dirname(location.dbPath));
    return record?.store === "service" ? record : undefined;
  };
  if (fromEnv !== undefined) {
    // ARBEIT_URL decides alone, as it always did: a damaged record here does not stop it.
    let project: ReturnType<typeof recorded>;
    try {
      project = recorded();
    } catch {}
    const url = serviceUrl(fromEnv, "ARBEIT_URL");
    // The project's CA is for its service's origin: ARBEIT_URL naming that service keeps it.
    const ca =
      project?.ca !== undefined && new URL(project.url).origin === new URL(url).origin ? project.ca : undefined;
    return { url, root, from: "ARBEIT_URL", ca, ...folder };
  }
  const project = recorded();
  if (project === undefined) return undefined;
  const url = serviceUrl(project.url, `The service recorded in ${project.file ?? dirname(location!.dbPath)}`);
  return { url, root, from: "record", file: project.file, ca: project.ca, ...folder };
}
