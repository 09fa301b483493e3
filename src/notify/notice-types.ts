/**
 * The shapes of GET /api/notices (./notices.ts reads it): types only, with no imports, so that
 * the dashboard's page can share them.
 */

export interface Notice {
  kind: "task_completed" | "stale_claim";
  /** One happening, one key: a page notifies of each key once. */
  key: string;
  task_id: string;
  title: string | null;
  /** Who completed the task, or who held the claim. */
  agent: string | null;
  /** The session that held the claim (a stale claim only). */
  session: string | null;
  /** When the lease ran out (a stale claim), or when the task was completed. */
  at: string;
}

/** GET /api/notices[?after=<seq>]. */
export interface NoticesView {
  /** Events up to this seq are read: the next ask gives it as `after`. */
  seq: number;
  /** The database's time when read. */
  now: string;
  /** Every claim stale now, and what happened after `after` (none without it). */
  notices: Notice[];
  /** When the first live lease runs out, a claim goes stale without any event: ask again then. */
  next_lease_end: string | null;
  /** More events wait after `seq`: ask again at once. */
  more: boolean;
}
