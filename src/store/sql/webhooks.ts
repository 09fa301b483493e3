import type { SqlDb } from "./database.js";

/** The outgoing webhooks of `arbeit notify` (migration 0008), and their delivery state. */
export interface WebhookRow {
  id: string;
  url: string;
  /** The kinds of events it is told of (see src/notify/webhooks.ts). */
  events: string[];
  secret: string;
  created_at: string;
  removed_at: string | null;
  /** Events up to this seq are handled. */
  delivered_seq: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  last_failure: string | null;
}

const COLUMNS =
  "id, url, events, secret, created_at, removed_at, delivered_seq, last_success_at, last_failure_at, last_failure";

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

export function webhookStatements(db: SqlDb) {
  const toRow = (row: Record<string, unknown>): WebhookRow => ({
    id: String(row.id),
    url: String(row.url),
    events: JSON.parse(String(row.events)) as string[],
    secret: String(row.secret),
    created_at: String(row.created_at),
    removed_at: text(row.removed_at),
    delivered_seq: Number(row.delivered_seq),
    last_success_at: text(row.last_success_at),
    last_failure_at: text(row.last_failure_at),
    last_failure: text(row.last_failure),
  });
  return {
    async insertWebhook(row: WebhookRow): Promise<void> {
      await db.run(
        `INSERT INTO webhooks (${COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL, ?, NULL, NULL, NULL)`,
        row.id,
        row.url,
        JSON.stringify(row.events),
        row.secret,
        row.created_at,
        row.delivered_seq,
      );
    },
    /** Live webhooks (or all, removed ones too), oldest first. */
    async listWebhooks(all = false): Promise<WebhookRow[]> {
      const rows = await db.all(
        `SELECT ${COLUMNS} FROM webhooks ${all ? "" : "WHERE removed_at IS NULL"} ORDER BY created_at, id`,
      );
      return rows.map(toRow);
    },
    async removeWebhook(id: string, now: string): Promise<boolean> {
      return (await db.run("UPDATE webhooks SET removed_at = ? WHERE id = ? AND removed_at IS NULL", now, id)) > 0;
    },
    /**
     * Moves a webhook's cursor from `from` to `to` if no one else did: of several processes
     * delivering, exactly one takes each event.
     */
    async advanceWebhook(id: string, from: number, to: number): Promise<boolean> {
      return (
        (await db.run(
          "UPDATE webhooks SET delivered_seq = ? WHERE id = ? AND delivered_seq = ? AND removed_at IS NULL",
          to,
          id,
          from,
        )) > 0
      );
    },
    async recordWebhookOutcome(id: string, at: string, failure: string | null): Promise<void> {
      if (failure === null) await db.run("UPDATE webhooks SET last_success_at = ? WHERE id = ?", at, id);
      else await db.run("UPDATE webhooks SET last_failure_at = ?, last_failure = ? WHERE id = ?", at, failure, id);
    },
    async taskTitle(id: string): Promise<string | null> {
      return text((await db.get("SELECT title FROM tasks WHERE id = ?", id))?.title);
    },
  };
}
