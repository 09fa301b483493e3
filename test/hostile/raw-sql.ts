import { join } from "node:path";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { adminQuery } from "../helpers/postgres.js";
import type { HostileProject } from "./engines.js";

/**
 * Writes to a project's store behind Arbeit's back, as a script or a careless hand with a SQL
 * console would: foreign keys and triggers off, so that what the schema would stop gets in too.
 */
export async function rawSql(project: HostileProject, sql: string): Promise<void> {
  if (project.engine === "sqlite") {
    const driver = await openDriver(join(project.dir, ".arbeit", "arbeit.db"));
    try {
      driver.exec("PRAGMA foreign_keys = OFF");
      driver.exec(sql);
    } finally {
      driver.close();
    }
    return;
  }
  const schema = project.env.ARBEIT_DATABASE_SCHEMA!;
  await adminQuery(`SET search_path TO "${schema}"; SET session_replication_role = replica; ${sql}`);
}
