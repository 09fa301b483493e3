import type { ArbeitEvent } from "../domain/types.js";
import type { TaskStore } from "../store/task-store.js";
import { agentsIn, inboxIn } from "./overview.js";
import type { CollisionRow, HomeView } from "./views.js";

/**
 * The dashboard's home view in one read transaction: what needs a person (open questions, stale
 * claims, sessions that stopped with their task unfinished, attempts piling up on one task,
 * webhooks failing), the edits hosts refused lately (collisions), who
 * works on what now, and how the work goes (epics' completion, work done per day).
 */

/** How many live attempt entries on one unfinished task call for a person's look. */
export const HOME_ATTEMPTS_PILING = 3;
/** Days of work shown per day (today included). */
export const HOME_DAYS = 14;
/** Sessions that stopped work within this long count as leaving it unfinished. */
const STOPPED_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
const LISTED_MAX = 20;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC days from `HOME_DAYS - 1` days before `now` through `now`'s, as YYYY-MM-DD. */
function lastDays(now: string): string[] {
  const today = Date.parse(`${now.slice(0, 10)}T00:00:00.000Z`);
  return Array.from({ length: HOME_DAYS }, (_, i) =>
    new Date(today - (HOME_DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
  );
}

/**
 * A failing webhook as the dashboard shows it: by its host alone. A webhook's URL is often a
 * secret itself (Slack's and ntfy's carry their key in the path), and every token that may read
 * the dashboard, a read-only one too, sees this view; `arbeit notify list`, on the store, shows it
 * whole. The failure names the URL, so it is shortened the same way.
 */
function withoutTarget<W extends { url: string; last_failure: string }>(webhook: W): W {
  let shown = "(a URL)";
  try {
    shown = `${new URL(webhook.url).origin}/…`;
  } catch {}
  return { ...webhook, url: shown, last_failure: webhook.last_failure.replaceAll(webhook.url, shown) };
}

function collisionOf(event: ArbeitEvent & { freed: boolean }): CollisionRow {
  const { payload } = event;
  const holder = (payload.holder ?? {}) as Partial<CollisionRow["holder"]>;
  return {
    seq: event.seq,
    at: event.timestamp,
    session: event.session_id,
    agent: event.agent,
    path: String(payload.path),
    pattern: String(payload.pattern),
    holder: { session: holder.session ?? "?", agent: holder.agent ?? null, task_id: holder.task_id ?? null },
    reservation_id: event.entity_id,
    freed: event.freed,
  };
}

export async function readHome(store: TaskStore): Promise<HomeView> {
  return store.read(async (tx) => {
    const now = tx.databaseNow();
    const seq = await tx.maxEventSeq();
    const inbox = await inboxIn(tx);
    const agents = await agentsIn(tx);
    const since = new Date(Date.parse(now) - STOPPED_WINDOW_MS).toISOString();
    const stopped = await tx.stoppedUnfinished(since, LISTED_MAX);
    const attempts = await tx.attemptsPilingUp(HOME_ATTEMPTS_PILING, LISTED_MAX);
    const webhooks = (await tx.failingWebhooks()).map(withoutTarget);
    const collisions = (await tx.recentEditRefusals(since, LISTED_MAX)).map(collisionOf);
    const epics = await tx.epicProgress();
    const days = lastDays(now);
    const counted = new Map((await tx.dailyWork(`${days[0]}T00:00:00.000Z`)).map((row) => [row.day, row]));
    return {
      seq,
      now,
      attention: { questions: inbox.questions, stale_claims: agents.stale_claims, stopped, attempts, webhooks },
      collisions,
      // Who works on what now: sessions working on a task or holding a claim.
      sessions: agents.sessions.filter((session) => session.working !== null || session.claims.length > 0),
      epics,
      days: days.map((day) => counted.get(day) ?? { day, completed: 0, decisions: 0, blockers: 0 }),
    };
  });
}
