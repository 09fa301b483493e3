import { ArbeitError, type ErrorCode } from "../domain/errors.js";

/**
 * Failures of the machine rather than of Arbeit: a read-only or full disk, missing permissions, a
 * damaged file, a database server that is down. Each gets its own documented code naming the
 * store and what to do, instead of INTERNAL_ERROR's "this is a bug in Arbeit".
 */
type Kind = Extract<ErrorCode, "STORE_READ_ONLY" | "STORE_DAMAGED" | "STORE_UNAVAILABLE">;

/** SQLite's result codes (primary part) and errno names, by what they mean for the user. */
const BY_CODE: Record<string, Kind> = {
  SQLITE_READONLY: "STORE_READ_ONLY",
  EROFS: "STORE_READ_ONLY",
  SQLITE_CORRUPT: "STORE_DAMAGED",
  SQLITE_NOTADB: "STORE_DAMAGED",
  SQLITE_FULL: "STORE_UNAVAILABLE",
  SQLITE_IOERR: "STORE_UNAVAILABLE",
  SQLITE_CANTOPEN: "STORE_UNAVAILABLE",
  SQLITE_PERM: "STORE_UNAVAILABLE",
  SQLITE_AUTH: "STORE_UNAVAILABLE",
  ENOSPC: "STORE_UNAVAILABLE",
  EDQUOT: "STORE_UNAVAILABLE",
  EACCES: "STORE_UNAVAILABLE",
  EPERM: "STORE_UNAVAILABLE",
  EIO: "STORE_UNAVAILABLE",
  ENOENT: "STORE_UNAVAILABLE",
  ENOTDIR: "STORE_UNAVAILABLE",
  EMFILE: "STORE_UNAVAILABLE",
  ENFILE: "STORE_UNAVAILABLE",
  // Postgres: the connection failed or the server refused for want of resources.
  ECONNREFUSED: "STORE_UNAVAILABLE",
  ECONNRESET: "STORE_UNAVAILABLE",
  ETIMEDOUT: "STORE_UNAVAILABLE",
  ENOTFOUND: "STORE_UNAVAILABLE",
  EAI_AGAIN: "STORE_UNAVAILABLE",
  EHOSTUNREACH: "STORE_UNAVAILABLE",
  "53100": "STORE_UNAVAILABLE", // disk_full
  "53200": "STORE_UNAVAILABLE", // out_of_memory
  "53300": "STORE_UNAVAILABLE", // too_many_connections
  "57P01": "STORE_UNAVAILABLE", // admin_shutdown
  "57P03": "STORE_UNAVAILABLE", // cannot_connect_now
  "08000": "STORE_UNAVAILABLE", // connection_exception
  "08001": "STORE_UNAVAILABLE",
  "08006": "STORE_UNAVAILABLE",
  "42501": "STORE_UNAVAILABLE", // insufficient_privilege
  "25006": "STORE_READ_ONLY", // read_only_sql_transaction (a hot standby)
  XX001: "STORE_DAMAGED", // data_corrupted
  XX002: "STORE_DAMAGED", // index_corrupted
};

const WHAT: Record<Kind, string> = {
  STORE_READ_ONLY: "cannot be written",
  STORE_DAMAGED: "is damaged",
  STORE_UNAVAILABLE: "could not be used",
};

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return undefined;
  // SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED, ...: the primary code says what kind it is.
  const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0];
  return primary ?? code;
}

/** The environment error `error` stands for at store `location`, or undefined when it is none. */
export function storeFailure(error: unknown, location: string): ArbeitError | undefined {
  if (error instanceof ArbeitError) return undefined;
  const code = codeOf(error);
  const kind = code === undefined ? undefined : BY_CODE[code];
  if (kind === undefined) return undefined;
  const reason = error instanceof Error ? error.message : String(error);
  return new ArbeitError(kind, `The Arbeit database at ${location} ${WHAT[kind]}: ${reason} (${code}).`, {
    details: { path: location, cause: code },
  });
}

/** Rethrows `error` as its environment error when it is one; otherwise as it is. */
export function rethrowAsStoreFailure(error: unknown, location: string): never {
  throw storeFailure(error, location) ?? error;
}
