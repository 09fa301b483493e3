/**
 * The one small interface the SQLite store needs from a driver. Each runtime supplies its own
 * (better-sqlite3 under Node, bun:sqlite under Bun) in a tiny file; the store never imports one.
 * Parameters are positional only: the two drivers disagree about named-parameter prefixes.
 */
export type SqlValue = string | number | bigint | null | Uint8Array;

export interface SqlStatement {
  run(...params: SqlValue[]): { changes: number };
  get<T = Record<string, unknown>>(...params: SqlValue[]): T | undefined;
  all<T = Record<string, unknown>>(...params: SqlValue[]): T[];
  /** The rows as arrays of column values, in column order. */
  values(...params: SqlValue[]): unknown[][];
}

export interface SqlDriver {
  readonly runtime: "node" | "bun";
  prepare(sql: string): SqlStatement;
  /** Runs one or more statements without parameters. */
  exec(sql: string): void;
  /**
   * Writes a consistent copy of the database to `destination` (a new file) while other
   * connections keep writing: SQLite's online backup under Node, VACUUM INTO under Bun.
   */
  backup(destination: string): Promise<void>;
  close(): void;
}

/** True for SQLite's "database is locked / busy" errors, in either driver's wording. */
export function isBusyError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) return true;
  return /database is locked|database table is locked|SQLITE_BUSY/i.test(error.message);
}

/** True when an insert hit a UNIQUE or PRIMARY KEY constraint. */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") return true;
  return /UNIQUE constraint failed/i.test(error.message);
}

export interface DriverMode {
  /** Open without write access: nothing can be written through this connection. */
  readonly?: boolean;
  /**
   * Promise SQLite that nothing changes the file while it is open, so it needs no lock and no
   * shared-memory file: how a WAL database on a read-only file system can be read at all.
   */
  immutable?: boolean;
}

/** The URI SQLite reads `immutable` from; every other open takes the plain path. */
export function immutableUri(path: string): string {
  const encoded = path.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `file:${encoded.startsWith("/") ? "" : "/"}${encoded.replace(/\\/g, "/")}?immutable=1`;
}
