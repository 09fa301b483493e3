import { ArbeitError } from "../../domain/errors.js";

/** The schema Arbeit's tables live in when none is named (ARBEIT_DATABASE_SCHEMA). */
export const DEFAULT_SCHEMA = "arbeit";

/** Unquoted-identifier shape: the name goes into SQL text (search_path), so nothing else is let in. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Postgres's own schemas (information_schema, pg_catalog, pg_toast, pg_temp_N, ...): never Arbeit's. */
const SYSTEM_SCHEMA = /^(information_schema$|pg_)/i;

export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) {
    throw new ArbeitError("INVALID_ARGUMENT", `${JSON.stringify(schema)} is not a usable Postgres schema name.`, {
      suggestions: ["Use letters, digits and underscores (at most 63, not starting with a digit), e.g. arbeit."],
    });
  }
  if (SYSTEM_SCHEMA.test(schema)) {
    throw new ArbeitError(
      "INVALID_ARGUMENT",
      `${schema} is one of Postgres's system schemas (information_schema, pg_*); Arbeit's tables do not belong there.`,
      { suggestions: ["Set ARBEIT_DATABASE_SCHEMA to a schema of Arbeit's own, e.g. arbeit (the default)."] },
    );
  }
  return schema;
}

export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** The URL without its password, plus the schema: safe to show in messages and logs. */
export function describeLocation(url: string, schema: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : "";
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname} (schema ${schema})`;
  } catch {
    return `postgres (schema ${schema})`;
  }
}

function schemaHash(schema: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(schema)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/**
 * The advisory-lock key of one schema's graph lock, which migrations and the writers that check
 * rules across tasks take: a fixed class ("ARBE") and a 32-bit FNV-1a hash of the schema name.
 * Two schemas that happen to share a hash only wait for each other, never conflict.
 */
export function lockKey(schema: string): [number, number] {
  return [0x41524245, schemaHash(schema)];
}

/** A transaction-scoped advisory lock; the key is two 32-bit integers made here, never user text. */
export function advisoryLock([space, key]: [number, number]): string {
  return `SELECT pg_advisory_xact_lock(${space}, ${key})`;
}

/** The key of the lock a writer holds from its first event to its commit (class "ARBV"). */
export function eventOrderKey(schema: string): [number, number] {
  return [0x41524256, schemaHash(schema)];
}

/**
 * Serialization failures and deadlocks: the transaction was rolled back and may simply run again.
 * So may a unique violation: two writers inserted the same natural key (a session link, a file
 * touch, a memory key, a request id) side by side, and the one that lost sees the winner's row
 * when it runs again, taking the path for an existing row.
 */
export function isTransientError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40001" || code === "40P01" || code === "23505";
}

/** lock_timeout ran out waiting for the write lock (or a row lock). */
export function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "55P03";
}
