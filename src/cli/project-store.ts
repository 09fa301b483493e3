import type { MaintainedStore } from "../maintenance/doctor.js";
import { openProjectStore } from "../maintenance/open-store.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson } from "./output.js";

/** Where a maintenance command finds the store: as every command does (--db, ARBEIT_DB, the nearest project). */
export const storeWhere = (options: GlobalOptions) => ({
  cwd: process.cwd(),
  db: options.db ?? process.env.ARBEIT_DB,
});

/**
 * Runs a maintenance command on the project's store. A failure, to open it or inside `fn`, is
 * printed as the error envelope (exit 1) like any tool's; the store is closed either way.
 */
export async function onProjectStore(
  options: GlobalOptions,
  fn: (store: MaintainedStore) => Promise<number>,
): Promise<number> {
  let store: MaintainedStore | undefined;
  try {
    store = await openProjectStore(storeWhere(options));
    return await fn(store);
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  } finally {
    await store?.close();
  }
}
