import { clientRange } from "../domain/client-versions.js";
import { type StatusReport, storeStatus } from "../maintenance/status.js";
import type { SqlStore } from "../store/sql/database.js";
import type { TaskStore } from "../store/task-store.js";
import { actingAgent, type Token } from "../team/token-rules.js";

/** Who a token is, as the service tells its holder: never its secret. */
export interface TokenIdentity {
  id: string;
  name: string;
  kind: Token["kind"];
  /** The name its calls act as: the agent's own, or `human:<name>`. */
  acts_as: string;
  access: "read-only" | "read-write";
  expires_at: string | null;
}

/** GET /api/status: what `arbeit status` shows for a checkout that uses this service. */
export interface ServiceReport {
  service: { version: string; clients: string };
  token: TokenIdentity;
  store: { engine: StatusReport["store"]["engine"]; schema_version: number; read_only?: string };
  tasks: StatusReport["tasks"];
  working: StatusReport["working"];
  claims: StatusReport["claims"];
  attention: Array<{ code: string; message: string; hint?: string }>;
}

export function tokenIdentity(token: Token): TokenIdentity {
  return {
    id: token.id,
    name: token.name,
    kind: token.kind,
    acts_as: actingAgent(token),
    access: token.read_only ? "read-only" : "read-write",
    expires_at: token.expires_at,
  };
}

/**
 * The same picture a local `arbeit status` gives (tasks by status, who works on what, claims),
 * read on the service's store, with the service's release and the caller's token. What only the
 * service's machine holds stays there: the store's location, and a failing webhook's address
 * (a webhook URL may carry its receiver's secret).
 */
export async function serviceReport(
  store: TaskStore & SqlStore,
  version: string,
  token: Token,
): Promise<ServiceReport> {
  const report = await storeStatus(store, []);
  const failing = report.attention.filter((item) => item.code === "WEBHOOK_FAILING").length;
  const attention: ServiceReport["attention"] = report.attention.filter((item) => item.code !== "WEBHOOK_FAILING");
  if (failing > 0)
    attention.push({
      code: "WEBHOOK_FAILING",
      message: `${failing} webhook(s) of the service failed their latest delivery.`,
      hint: "The service's administrator sees which and why with `arbeit notify list` where it runs.",
    });
  return {
    service: { version, clients: clientRange(version).text },
    token: tokenIdentity(token),
    store: {
      engine: report.store.engine,
      schema_version: report.store.schema_version,
      ...(report.store.read_only ? { read_only: report.store.read_only } : {}),
    },
    tasks: report.tasks,
    working: report.working,
    claims: report.claims,
    attention,
  };
}
