/** Where a project keeps its Arbeit data: `.arbeit/arbeit.db` in the project root. */
export const ARBEIT_DIR = ".arbeit";
export const DB_FILE = "arbeit.db";
/** Which store the checkout uses, when it is not DB_FILE (src/store/store-record.ts). */
export const STORE_RECORD_FILE = "config.json";
/**
 * The service a project uses, committed with it (src/store/service-file.ts): a clone knows from it
 * that its tasks are behind an `arbeit serve` service, not in a store of its own.
 */
export const SERVICE_FILE = "service.json";
