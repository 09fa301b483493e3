import { ENFORCE_KEY, type Reservation } from "../../domain/reservations.js";
import { memoryStatements } from "../sql/memory.js";
import { reservationStatements } from "../sql/reservations.js";
import { listMigrations, schemaVersion } from "./migrate.js";
import { openDriver } from "./open-driver.js";
import { SqliteDb } from "./sqlite-db.js";

/**
 * A look at a project's file reservations straight from its SQLite file, for the hook Claude
 * Code runs before every file tool: the file is opened read-only, with no store, migration or
 * service around it, and asked with the store's own statements (src/store/sql). Times are this
 * machine's clock, which is the database's clock for a file on this machine.
 */
export interface ReservationLookup {
  /** Live reservations that could overlap any of `patterns` (the store's prefix lookup). */
  reservationsNear(patterns: readonly string[]): Promise<Reservation[]>;
  /** The project's warn-only switch: the value of the project memory key ENFORCE_KEY, undefined when unset. */
  enforcement(): Promise<unknown>;
}

/** Thrown for a file this lookup leaves to the full store: another schema version than this code's. */
export class LookupRefused extends Error {}

/**
 * Opens the SQLite file at `path` read-only for `fn`, and closes it. A file at another schema
 * version than this code knows is refused (LookupRefused): the full store migrates an older one
 * and refuses a newer one, with its own message.
 */
export async function withReservationLookup<T>(
  path: string,
  fn: (lookup: ReservationLookup) => Promise<T>,
): Promise<T> {
  const driver = await openDriver(path, { readonly: true });
  try {
    const version = schemaVersion(driver);
    if (version !== listMigrations().length)
      throw new LookupRefused(`the database at ${path} is at schema version ${version}`);
    const db = new SqliteDb(driver);
    const reservations = reservationStatements(db);
    return await fn({
      reservationsNear: (patterns) => reservations.reservationsNear(patterns, new Date().toISOString()),
      async enforcement() {
        const entry = await memoryStatements(db).memoryGet("project", "", ENFORCE_KEY, new Date().toISOString());
        return entry?.value;
      },
    });
  } finally {
    driver.close();
  }
}
