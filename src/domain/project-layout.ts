/** Where a project keeps its Arbeit data: `.arbeit/arbeit.db` in the project root. */
export const ARBEIT_DIR = ".arbeit";
export const DB_FILE = "arbeit.db";
