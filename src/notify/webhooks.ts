import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { ArbeitError } from "../domain/errors.js";
import { newId } from "../domain/ids.js";
import type { ArbeitEvent } from "../domain/types.js";
import type { SqlDb, SqlStore } from "../store/sql/database.js";
import { eventStatements } from "../store/sql/events.js";
import { type WebhookRow, webhookStatements } from "../store/sql/webhooks.js";
import { targetProblem } from "./webhook-target.js";

/**
 * Outgoing webhooks (`arbeit notify`): a project tells URLs of the events a person wants to hear
 * of (a question an agent asks, above all). Agents never wait for them: an agent's call only
 * appends to the event log, and a long-running process (`arbeit ui` or `arbeit serve`) reads the
 * log and delivers, retrying with back-off. Each request is signed: `X-Arbeit-Signature: t=<unix seconds>,v1=<hex>`,
 * the HMAC-SHA256 of `<t>.<body>` under the webhook's secret, so a receiver can tell a real
 * delivery from a forged, altered or replayed one (verifyWebhook).
 */

/** What a webhook can be told of, and which events each kind is. */
export const WEBHOOK_KINDS = ["question", "answer", "decision", "task_completed", "stale_claim"] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];
export const DEFAULT_WEBHOOK_KINDS: WebhookKind[] = ["question"];

/** A signature older or newer than this (seconds) is refused: a recorded request cannot be replayed later. */
export const SIGNATURE_TOLERANCE_S = 300;
/** Tries per delivery: the first, then retries after 1, 2, 4 and 8 times the back-off base. */
export const DELIVERY_TRIES = 5;
const DELIVERY_TIMEOUT_MS = 10_000;
const BATCH = 50;

export type Webhook = Omit<WebhookRow, "secret">;

/** The kind of an event for webhooks, or undefined when it is none of them. */
export function webhookKind(event: Pick<ArbeitEvent, "event_type" | "payload">): WebhookKind | undefined {
  const payload = event.payload ?? {};
  if (event.event_type === "context_added") {
    const type = payload.type;
    if (type === "blocker") return "question";
    if (type === "user_input") return "answer";
    if (type === "decision") return "decision";
    return undefined;
  }
  if (event.event_type === "task_updated") {
    const status = (payload.changes as { status?: { to?: unknown } } | undefined)?.status;
    return status?.to === "completed" ? "task_completed" : undefined;
  }
  return event.event_type === "claim_expired" ? "stale_claim" : undefined;
}

/** The signature header for `body` sent at `unixSeconds`. */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Whether `body` came from this webhook: its signature matches under `secret` and was made within
 * SIGNATURE_TOLERANCE_S of `nowSeconds`. A receiver that also keeps the `X-Arbeit-Delivery` ids
 * it has seen refuses a replay inside that window too.
 */
export function verifyWebhook(
  secret: string,
  signature: string | undefined,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const match = /^t=(\d{1,15}),v1=([0-9a-f]{64})$/.exec(signature ?? "");
  if (!match) return false;
  const at = Number(match[1]);
  if (Math.abs(nowSeconds - at) > SIGNATURE_TOLERANCE_S) return false;
  const expected = Buffer.from(signWebhook(secret, body, at).slice(`t=${at},v1=`.length), "hex");
  return timingSafeEqual(expected, Buffer.from(match[2]!, "hex"));
}

async function databaseNow(db: SqlDb): Promise<string> {
  return String((await db.get(`SELECT ${db.dialect.now} AS now`))?.now);
}

const withoutSecret = ({ secret: _secret, ...webhook }: WebhookRow): Webhook => webhook;

function checkedUrl(url: string, allowPrivate: boolean): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    parsed = new URL("invalid:");
  }
  if ((parsed.protocol !== "https:" && parsed.protocol !== "http:") || url.length > 2000)
    throw new ArbeitError("INVALID_ARGUMENT", `The webhook's URL must be an http or https URL: ${url.slice(0, 200)}`, {
      details: { field: "url" },
    });
  const problem = targetProblem(parsed);
  if (problem && (problem.reason === "credentials" || !allowPrivate))
    throw new ArbeitError("WEBHOOK_TARGET_REFUSED", `A webhook cannot deliver to ${parsed.host}: ${problem.message}.`, {
      suggestions:
        problem.reason === "credentials"
          ? [
              "Leave the user name and password out of the URL; a receiver checks the X-Arbeit-Signature header instead.",
            ]
          : [
              "Deliveries are POSTs from the machine that runs arbeit ui or arbeit serve. If you mean this target, add it yourself with --allow-private.",
            ],
      details: { field: "url", reason: problem.reason },
    });
  return parsed.href;
}

function checkedKinds(kinds: readonly string[]): WebhookKind[] {
  const unknown = kinds.filter((kind) => !(WEBHOOK_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0 || kinds.length === 0)
    throw new ArbeitError("INVALID_ARGUMENT", `Unknown event kinds: ${unknown.join(", ") || "none given"}.`, {
      suggestions: [`Choose among ${WEBHOOK_KINDS.join(", ")}.`],
      details: { field: "events" },
    });
  return [...new Set(kinds)] as WebhookKind[];
}

/**
 * Adds a webhook; it hears of events from now on. A target on this machine or a private network
 * is refused unless `allowPrivate` says a person means it (webhook-target.ts). The secret is returned here and never shown
 * again (the store keeps it: signing needs it).
 */
export async function addWebhook(
  store: SqlStore,
  url: string,
  kinds: readonly string[] = DEFAULT_WEBHOOK_KINDS,
  options: { allowPrivate?: boolean } = {},
): Promise<{ webhook: Webhook; secret: string }> {
  const checked = { url: checkedUrl(url, options.allowPrivate === true), events: checkedKinds(kinds) };
  const secret = `whsec_${randomBytes(32).toString("base64url")}`;
  return store.transaction("write", async (db) => {
    const row: WebhookRow = {
      id: newId("webhook"),
      ...checked,
      secret,
      created_at: await databaseNow(db),
      removed_at: null,
      delivered_seq: await eventStatements(db).maxEventSeq(),
      last_success_at: null,
      last_failure_at: null,
      last_failure: null,
    };
    await webhookStatements(db).insertWebhook(row);
    return { webhook: withoutSecret(row), secret };
  });
}

export async function listWebhooks(store: SqlStore): Promise<Webhook[]> {
  return store.transaction("read", async (db) => (await webhookStatements(db).listWebhooks()).map(withoutSecret));
}

export async function removeWebhook(store: SqlStore, id: string): Promise<void> {
  await store.transaction("write", async (db) => {
    if (!(await webhookStatements(db).removeWebhook(id, await databaseNow(db))))
      throw new ArbeitError("INVALID_ARGUMENT", `No live webhook has the id ${id}.`, {
        suggestions: ["arbeit notify list shows the webhooks and their ids."],
        details: { id },
      });
  });
}

/** What a webhook is sent for one event: Slack reads `text`; the rest is for programs. */
export function webhookBody(event: ArbeitEvent, kind: WebhookKind, title: string | null): string {
  const task = event.task_id ? `"${title ?? event.task_id}" (${event.task_id})` : "";
  const content = typeof event.payload.content === "string" ? event.payload.content : "";
  const who = event.agent ?? "an agent";
  const text = {
    question: `${who} asks on ${task}: ${content}`,
    answer: `${who} answered on ${task}: ${content}`,
    decision: `${who} decided on ${task}: ${content}`,
    task_completed: `${task} is completed (${who})`,
    stale_claim: `The claim on ${task} went stale`,
  }[kind];
  return JSON.stringify({
    kind,
    text,
    task: event.task_id ? { id: event.task_id, title } : null,
    event: {
      seq: event.seq,
      id: event.id,
      event_type: event.event_type,
      timestamp: event.timestamp,
      agent: event.agent,
      session_id: event.session_id,
      payload: event.payload,
    },
  });
}

/** Who frees the leases that ran out while a webhook hears of stale claims: the deliverer. */
export const STALE_SWEEPER = { agent: "arbeit-webhooks", session: null } as const;

export interface DeliveryOptions {
  /** How often to look for new events (ms) while a webhook exists. */
  pollMs?: number;
  /**
   * The longest wait between looks while no webhook exists (ms, default 10 times pollMs): the
   * wait doubles from pollMs up to it, so a store without webhooks is asked for them seldom. A
   * webhook added then is found within it; from then on the deliverer looks every pollMs.
   */
  idleMs?: number;
  /** The back-off base (ms): retries wait 1, 2, 4, 8 times it. */
  retryBaseMs?: number;
  /**
   * Frees the leases that ran out, recording each as `claim_expired`: a claim goes stale without
   * anyone calling, and otherwise only the next claim or resume would record it. Called while a
   * webhook hears of `stale_claim`, at most every `staleCheckMs`.
   */
  freeExpiredClaims?: () => Promise<unknown>;
  /** How often to look for leases that ran out (ms), while a webhook hears of them. */
  staleCheckMs?: number;
  /** Told of each delivery once it ends: its receiver took it, or every try failed (the service's metrics). */
  onDelivery?: (outcome: "delivered" | "failed") => void;
}

/**
 * Delivers every live webhook's events while it runs: reads the log after each webhook's cursor,
 * takes each event by moving the cursor (so of several processes, one sends it), and sends the
 * ones of its kinds, retrying with back-off. A delivery that fails every try is recorded as the
 * webhook's last failure, and the next event goes on. Returns the function that stops it.
 */
export function startWebhookDelivery(store: SqlStore, options: DeliveryOptions = {}): () => Promise<void> {
  const pollMs = options.pollMs ?? 500;
  const idleMs = Math.max(pollMs, options.idleMs ?? pollMs * 10);
  let wait = pollMs;
  const retryBaseMs = options.retryBaseMs ?? 1000;
  const staleCheckMs = options.staleCheckMs ?? 5000;
  let staleCheckedAt = 0;
  let stopped = false;
  // Stopping ends every wait and every request under way at once.
  const stop = new AbortController();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      stop.signal.addEventListener("abort", done);
    });

  async function send(webhook: WebhookRow, body: string, delivery: string): Promise<string | null> {
    let failure = "";
    for (let attempt = 0; attempt < DELIVERY_TRIES && !stopped; attempt++) {
      if (attempt > 0) await sleep(retryBaseMs * 2 ** (attempt - 1));
      if (stopped) break;
      try {
        const response = await fetch(webhook.url, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            "User-Agent": "arbeit-webhook",
            "X-Arbeit-Delivery": delivery,
            "X-Arbeit-Signature": signWebhook(webhook.secret, body, Math.floor(Date.now() / 1000)),
          },
          body,
          redirect: "error",
          signal: AbortSignal.any([AbortSignal.timeout(DELIVERY_TIMEOUT_MS), stop.signal]),
        });
        await response.body?.cancel();
        if (response.ok) return null;
        failure = `HTTP ${response.status} from ${webhook.url}`;
      } catch (error) {
        failure = `${webhook.url}: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    return `${failure} (after ${DELIVERY_TRIES} tries)`;
  }

  async function deliver(webhook: WebhookRow): Promise<void> {
    const { events, titles } = await store.transaction("read", async (db) => {
      const events = await eventStatements(db).listEvents({ after_seq: webhook.delivered_seq, limit: BATCH });
      const titles = new Map<string, string | null>();
      for (const event of events)
        if (event.task_id && !titles.has(event.task_id))
          titles.set(event.task_id, await webhookStatements(db).taskTitle(event.task_id));
      return { events, titles };
    });
    let cursor = webhook.delivered_seq;
    // Takes the events up to `seq`: one write for a run of events it does not hear of.
    const take = (seq: number) =>
      store.transaction("write", (db) => webhookStatements(db).advanceWebhook(webhook.id, cursor, seq));
    for (const event of events) {
      if (stopped) return;
      const kind = webhookKind(event);
      if (kind === undefined || !webhook.events.includes(kind)) continue;
      if (!(await take(event.seq))) return; // another process delivers this webhook now
      cursor = event.seq;
      const body = webhookBody(event, kind, event.task_id ? (titles.get(event.task_id) ?? null) : null);
      const failure = await send(webhook, body, `${webhook.id}:${event.seq}`);
      options.onDelivery?.(failure === null ? "delivered" : "failed");
      await store.transaction("write", async (db) =>
        webhookStatements(db).recordWebhookOutcome(webhook.id, await databaseNow(db), failure),
      );
    }
    const last = events.at(-1);
    if (last && last.seq > cursor && !stopped) await take(last.seq);
  }

  // The webhooks whose delivery is under way. Each goes at its own pace: a receiver that holds a
  // request open (or a retry's wait) holds up that webhook's next events only, never another's.
  const busy = new Map<string, Promise<void>>();
  const loop = (async () => {
    while (!stopped) {
      try {
        const webhooks = await store.transaction("read", (db) => webhookStatements(db).listWebhooks());
        // No webhook: nothing to deliver until one is added, so look again later and later.
        wait = webhooks.length === 0 ? Math.min(wait * 2, idleMs) : pollMs;
        if (
          options.freeExpiredClaims &&
          Date.now() - staleCheckedAt >= staleCheckMs &&
          webhooks.some((webhook) => webhook.events.includes("stale_claim"))
        ) {
          staleCheckedAt = Date.now();
          await options.freeExpiredClaims();
        }
        for (const webhook of webhooks) {
          if (busy.has(webhook.id)) continue;
          const run = deliver(webhook)
            // The store is busy or gone for a moment: a later round tries again.
            .catch(() => {})
            .finally(() => busy.delete(webhook.id));
          busy.set(webhook.id, run);
        }
      } catch {
        // The store is busy or gone for a moment: the next round tries again.
      }
      if (!stopped) await sleep(wait);
    }
  })();
  return async () => {
    stopped = true;
    stop.abort();
    await loop;
    await Promise.all(busy.values());
  };
}
