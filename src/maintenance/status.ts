import { TASK_STATUSES, type TaskStatus } from "../domain/types.js";
import type { HostProblem, HostStatus } from "../setup/host-status.js";
import { missionStatements, WEBHOOKS_SCHEMA } from "../store/sql/mission.js";
import { WORKING_NOW } from "../store/sql/overview.js";
import type { MaintainedStore } from "./doctor.js";
import { engineOf } from "./engine.js";

/**
 * `arbeit status`: where the store is and what it holds, who is working now, and which hosts are
 * set up, with a list of what needs a person's attention (the command exits 1 when it is not
 * empty). Reads only: one read transaction, and the hosts' configuration files.
 */

export interface StatusReport {
  ok: boolean;
  store: {
    engine: "sqlite" | "postgres";
    location: string;
    schema_version: number;
    /** Why the store cannot be written, when it cannot. */
    read_only?: string;
  };
  tasks: Record<TaskStatus, number> & { total: number };
  /** Work in progress: each session's active task. */
  working: Array<{ session_id: string; agent: string | null; task_id: string; title: string; since: string }>;
  claims: { live: number; expired: number };
  hosts: HostStatus[];
  attention: Array<{ code: string; message: string; hint?: string }>;
}

/** What each item of `attention` means; the item's own message and hint give the specifics. */
export const ATTENTION_CODES: Record<
  "EXPIRED_CLAIMS" | "STORE_READ_ONLY" | "WEBHOOK_FAILING" | "SERVICE_VERSION_UNKNOWN" | HostProblem["code"],
  string
> = {
  EXPIRED_CLAIMS: "Tasks still name an owner whose lease ran out; `arbeit doctor --fix` releases them.",
  STORE_READ_ONLY: "The store cannot be written; reads still work.",
  WEBHOOK_FAILING: "A webhook's latest delivery failed; `arbeit notify list` shows the error.",
  SERVICE_VERSION_UNKNOWN:
    "The Arbeit service this checkout uses does not say its release: it is older than the exchange of versions; upgrade it.",
  HOST_INCOMPLETE:
    "Claude Code is set up only in part (a hook or the MCP server missing); `arbeit setup claude` completes it.",
  HOST_COMMAND_MISSING: "A host's configuration names an `arbeit` command or plugin file that is gone.",
  HOST_CONFIG_UNREADABLE: "A host's configuration file is not JSON Arbeit can read; setup leaves it alone.",
  HOST_PLUGIN_TWICE: "OpenCode loads Arbeit twice, from the plugin file and from opencode.json.",
  HOST_INSTRUCTIONS_OUTDATED: "The Arbeit instructions in CLAUDE.md or AGENTS.md are not the ones this version writes.",
};

export async function storeStatus(
  store: MaintainedStore,
  hosts: HostStatus[],
  now: string = new Date().toISOString(),
): Promise<StatusReport> {
  const attention: StatusReport["attention"] = [];
  const report = await store.transaction("read", async (db) => {
    const tasks = Object.fromEntries([
      ...TASK_STATUSES.map((status) => [status, 0]),
      ["total", 0],
    ]) as StatusReport["tasks"];
    const counts = await db.all(
      "SELECT status, COUNT(*) AS n FROM tasks WHERE deleted_at IS NULL GROUP BY status ORDER BY status",
    );
    for (const row of counts) {
      tasks[row.status as TaskStatus] = Number(row.n);
      tasks.total += Number(row.n);
    }
    const working = (await db.all(WORKING_NOW, now)).map((row) => ({
      session_id: String(row.session_id),
      agent: row.agent === null ? null : String(row.agent),
      task_id: String(row.task_id),
      title: String(row.title),
      since: String(row.started_at),
    }));
    const leases = await db.get(
      `SELECT COUNT(CASE WHEN lease_expires_at > ? THEN 1 END) AS live,
              COUNT(CASE WHEN lease_expires_at <= ? THEN 1 END) AS expired
       FROM tasks WHERE deleted_at IS NULL AND owner IS NOT NULL AND lease_expires_at IS NOT NULL`,
      now,
      now,
    );
    const schema_version = await engineOf(db).schemaVersion(db);
    // Webhooks came with a later schema; an older store, not migrated yet, has none.
    const failing = schema_version >= WEBHOOKS_SCHEMA ? await missionStatements(db).failingWebhooks() : [];
    return {
      schema_version,
      failing,
      tasks,
      working,
      claims: { live: Number(leases?.live ?? 0), expired: Number(leases?.expired ?? 0) },
    };
  });
  if (report.claims.expired > 0) {
    attention.push({
      code: "EXPIRED_CLAIMS",
      message: `${report.claims.expired} task(s) still name an owner whose lease ran out.`,
      hint: "arbeit doctor --fix releases them (each release is recorded as an event).",
    });
  }
  for (const webhook of report.failing)
    attention.push({
      code: "WEBHOOK_FAILING",
      message: `The webhook ${webhook.id} (${webhook.url}) failed at ${webhook.last_failure_at}: ${webhook.last_failure}.`,
      hint: "arbeit notify list shows its last delivery and failure; once the receiver is back, a delivery that succeeds clears this.",
    });
  if (store.readOnly) {
    attention.push({ code: "STORE_READ_ONLY", message: `The store cannot be written: ${store.readOnly}.` });
  }
  for (const host of hosts) attention.push(...host.problems);
  return {
    ok: attention.length === 0,
    store: {
      engine: store.dialect.name,
      location: store.location,
      schema_version: report.schema_version,
      ...(store.readOnly ? { read_only: store.readOnly } : {}),
    },
    tasks: report.tasks,
    working: report.working,
    claims: report.claims,
    hosts,
    attention,
  };
}
