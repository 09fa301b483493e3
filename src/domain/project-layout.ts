/** Where a project keeps its Arbeit data: `.arbeit/arbeit.db` in the project root. */
export const ARBEIT_DIR = ".arbeit";
export const DB_FILE = "arbeit.db";
/** Which store the checkout uses, when it is not DB_FILE (src/store/store-record.ts). */
export const STORE_RECORD_FILE = "config.json";
