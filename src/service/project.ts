import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { ARBEIT_DIR, DB_FILE, SERVICE_FILE } from "../domain/project-layout.js";
import { DEFAULT_SCHEMA } from "../store/postgres/config.js";
import { openPostgresStore, postgresTarget, projectTarget } from "../store/postgres/target.js";
import { readServiceFile, type ServiceFileContent, writeServiceFile } from "../store/service-file.js";
import { checkStoreFolder, databaseFileAt } from "../store/sqlite/database-file.js";
import { SqliteTaskStore } from "../store/sqlite/sqlite-task-store.js";
import { storeFailure } from "../store/store-errors.js";
import { readStoreRecord, writeStoreRecord } from "../store/store-record.js";
import { ArbeitService } from "./arbeit-service.js";
import { isDirectory, type LocateOptions, locate, rootForDb } from "./locate.js";
import { resolveLikeKernel } from "./resolve-path.js";

/** Where a project's data lives: the nearest ancestor holding `.arbeit/`, like git. */
export { ARBEIT_DIR, DB_FILE } from "../domain/project-layout.js";

export { type LocateOptions, type Location, locate } from "./locate.js";

export function notInitialized(options: LocateOptions): ArbeitError {
  const where = options.db
    ? `No database at ${resolve(options.cwd, options.db)}`
    : `No ${ARBEIT_DIR}/ folder in ${resolve(options.cwd)} or any parent`;
  return new ArbeitError("NOT_INITIALIZED", `${where}: Arbeit is not initialised for this project.`);
}

/**
 * Whether `error` means this process has no store it can use here, as when there is no project:
 * something other than a file where the database belongs, a checkout recorded on Postgres
 * without ARBEIT_DATABASE_URL, or one that uses an Arbeit service. Hooks stay silent on these,
 * as they do outside a project.
 */
export function isNoUsableStore(error: unknown): boolean {
  const cause = error instanceof ArbeitError ? error.details?.cause : undefined;
  return cause === "not_a_regular_file" || cause === "database_url_missing" || cause === "service_checkout";
}

/** Opens the project's service; NOT_INITIALIZED when there is none. */
export async function openProject(
  options: LocateOptions & {
    now?: () => Date;
    /** For a process that runs a call or two and ends (a hook, a CLI call): on Postgres it sends no read's COMMIT of its own. */
    shortLived?: boolean;
  },
): Promise<ArbeitService> {
  const location = locate(options);
  if (!location) throw notInitialized(options);
  const postgres = projectTarget(options, dirname(location.dbPath));
  const store = postgres
    ? // The schema is checked with the first transaction (no round trip of its own).
      await openPostgresStore(postgres, {
        checkSchema: "first-transaction",
        ...(options.shortLived ? { readCommit: "with-next-transaction" as const } : {}),
      })
    : await SqliteTaskStore.open(location.dbPath, { existing: true });
  return new ArbeitService(store, {
    // The real root, so that it compares with resolved paths (a temp folder may sit behind a symlink).
    projectRoot: resolveLikeKernel(location.root) ?? location.root,
    now: options.now,
  });
}

/**
 * Everything in .arbeit/ belongs to this checkout: a binary database that changes with every
 * call, its write-ahead log, hook notes, scratch files. Ignoring all of it (this file too) keeps
 * it out of commits without editing the project's own .gitignore, and a clone, having no
 * .arbeit/, starts with `arbeit init` as it should. Tasks travel by export or a shared Postgres.
 */
const GITIGNORE = `# Arbeit's store is local to this checkout: do not commit it.
# Share tasks with \`arbeit export\` and \`arbeit import\`, or a shared Postgres store.
*
`;

/**
 * A project that uses an Arbeit service commits the file naming it (and this one, so that a clone
 * ignores its own hook notes and scratch files too); nothing else in .arbeit/ is shared.
 */
const SERVICE_GITIGNORE = `# This project uses an Arbeit service: commit ${SERVICE_FILE} (it names the service, never a token)
# and this file. Everything else here belongs to this checkout.
*
!.gitignore
!${SERVICE_FILE}
`;

/** Writes .arbeit/.gitignore into a new .arbeit/ (not into another folder a --db file sits in). */
function ignoreInGit(folder: string, text = GITIGNORE): void {
  if (basename(folder) !== ARBEIT_DIR) return;
  try {
    writeFileSync(join(folder, ".gitignore"), text, { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

/**
 * A checkout set up with `arbeit init --server` by an older Arbeit names its service only in its
 * own `config.json`, which git ignores: `arbeit init --server` there writes the committed file
 * (and the .gitignore that lets it be committed, if it is still the one Arbeit wrote). The path of
 * the written file, or undefined when the folder is not such a checkout.
 */
function commitService(folder: string, server: ServiceFileContent): string | undefined {
  if (!isDirectory(folder) || readServiceFile(folder) !== undefined) return undefined;
  const recorded = readStoreRecord(folder);
  if (recorded?.store !== "service") return undefined;
  writeServiceFile(folder, server);
  const ignore = join(folder, ".gitignore");
  if (existsSync(ignore) && readFileSync(ignore, "utf8") === GITIGNORE) writeFileSync(ignore, SERVICE_GITIGNORE);
  return join(folder, SERVICE_FILE);
}

/**
 * arbeit_init: creates `.arbeit/arbeit.db` in the working directory (or the --db file). Inside a
 * project that already has one (a subfolder, a linked worktree) a second store would silently
 * shadow the first for everything run below it: refused unless `nested` asks for exactly that.
 */
export async function initProject(
  options: LocateOptions & {
    nested?: boolean | undefined;
    /** The service's URL and CA file (as the project records it): `arbeit init --server URL [--ca FILE]`. */
    server?: ServiceFileContent | undefined;
  },
): Promise<{ initialized: boolean; path: string; root: string; committed?: string }> {
  const cwd = resolve(options.cwd);
  if (options.server !== undefined && !options.db && !options.nested) {
    const upgraded = commitService(join(cwd, ARBEIT_DIR), options.server);
    if (upgraded) return { initialized: true, path: options.server.url, root: cwd, committed: upgraded };
  }
  const dbPath = options.db ? resolve(cwd, options.db) : join(cwd, ARBEIT_DIR, DB_FILE);
  const folder = dirname(dbPath);
  // Something other than a database file in its place (a directory, a FIFO), or other than a
  // folder in its folder's, is said as such.
  if (options.db) databaseFileAt(dbPath);
  checkStoreFolder(folder);
  if (options.db ? existsSync(dbPath) : isDirectory(folder)) {
    throw new ArbeitError(
      "ALREADY_INITIALIZED",
      `Arbeit is already initialised here (${options.db ? dbPath : folder}).`,
      {
        details: { path: dbPath },
      },
    );
  }
  const enclosing = options.db || options.nested ? undefined : locate({ cwd });
  if (enclosing) {
    throw new ArbeitError(
      "ALREADY_INITIALIZED",
      `${cwd} is inside the Arbeit project at ${enclosing.root} (its store: ${enclosing.dbPath}); every command here already uses it.`,
      {
        suggestions: ["Nothing to do: run Arbeit commands here as they are."],
        details: { path: enclosing.dbPath, root: enclosing.root },
      },
    );
  }
  if (options.server !== undefined) {
    // A project of a team's service: only the committed file, so that every process here, and in
    // every clone, sends its calls there.
    mkdirSync(folder, { recursive: true });
    ignoreInGit(folder, SERVICE_GITIGNORE);
    writeServiceFile(folder, options.server);
    return { initialized: true, path: options.server.url, root: cwd, committed: join(folder, SERVICE_FILE) };
  }
  const postgres = postgresTarget(options);
  if (postgres) {
    // Postgres mode: migrate the shared schema (a no-op when a teammate already did), then mark
    // this checkout as a project root. Nothing is created locally if the database is unreachable.
    const shared = await openPostgresStore(postgres);
    await shared.close();
    if (!existsSync(folder)) {
      mkdirSync(folder, { recursive: true });
      ignoreInGit(folder);
    }
    // Processes started without ARBEIT_DATABASE_URL then refuse instead of making a SQLite store.
    writeStoreRecord(folder, { store: "postgres", schema: postgres.schema ?? DEFAULT_SCHEMA });
    return { initialized: true, path: shared.location, root: cwd };
  }
  const made = !existsSync(folder);
  try {
    mkdirSync(folder, { recursive: true });
    // Only into a folder made here: a failed init removes it, and with it this file.
    if (made) ignoreInGit(folder);
    await createDatabase(dbPath);
  } catch (error) {
    // A failed init leaves nothing behind: no empty database, no folder that says "initialised".
    if (made) rmSync(folder, { recursive: true, force: true });
    if (error instanceof ArbeitError) throw error;
    throw storeFailure(error, dbPath) ?? error;
  }
  return { initialized: true, path: dbPath, root: rootForDb(dbPath, cwd) };
}

/**
 * Builds the database under a temporary name beside its place and links it in only when it is
 * complete: nobody ever sees a half-made (or 0-byte) database, and two inits racing cannot
 * overwrite each other (linking onto an existing name fails).
 */
async function createDatabase(dbPath: string): Promise<void> {
  // Loaded here, not at the top: node:crypto costs every other command a few ms of start-up.
  const { randomBytes } = await import("node:crypto");
  const scratch = `${dbPath}.init-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const store = await SqliteTaskStore.open(scratch);
    // Folds the write-ahead log into the file before it moves: bun:sqlite leaves the log behind
    // on close, and a database without its log is missing its schema. Every open turns WAL on again.
    store.driver.exec("PRAGMA journal_mode = DELETE");
    await store.close();
    try {
      linkSync(scratch, dbPath);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A file system without hard links: a rename, after a last look that the name is free.
      if (code !== "EEXIST" && !existsSync(dbPath)) return renameSync(scratch, dbPath);
      if (code !== "EEXIST") throw error;
      throw new ArbeitError("ALREADY_INITIALIZED", `Arbeit is already initialised here (${dbPath}).`, {
        details: { path: dbPath },
      });
    }
  } finally {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(`${scratch}${suffix}`, { force: true });
  }
}
