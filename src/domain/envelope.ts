import type { ErrorBody } from "./errors.js";
import type { Warning } from "./types.js";

/** The response every tool returns on every front end (and the dashboard's page reads). */
export type Envelope<T = unknown> =
  | { success: true; data: T; warnings?: Warning[] }
  | { success: false; error: ErrorBody; warnings?: Warning[] };
