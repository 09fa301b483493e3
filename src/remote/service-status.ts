import { HOOK_TIMEOUT_MS } from "./client.js";
import { tokenFor } from "./credentials.js";
import type { ServiceTarget } from "./target.js";

/** What `arbeit status` reports for a checkout that uses a service. */
export interface ServiceStatus {
  ok: boolean;
  store: { engine: "service"; url: string; from: ServiceTarget["from"] };
  token: "ARBEIT_TOKEN" | "stored" | "missing";
  /** What GET /healthz said: the service answers and its store does. */
  reachable: boolean;
  attention: Array<{ message: string; hint?: string }>;
}

export async function serviceStatus(
  target: ServiceTarget,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServiceStatus> {
  const token = env.ARBEIT_TOKEN ? "ARBEIT_TOKEN" : tokenFor(target.url, env) === undefined ? "missing" : "stored";
  const reachable = await fetch(`${target.url}/healthz`, { signal: AbortSignal.timeout(HOOK_TIMEOUT_MS) }).then(
    (response) => response.ok,
    () => false,
  );
  const attention: ServiceStatus["attention"] = [];
  if (!reachable)
    attention.push({
      message: `The service at ${target.url} does not answer, or its store does not.`,
      hint: "Check that `arbeit serve` runs there and the network reaches it.",
    });
  if (token === "missing")
    attention.push({ message: `No token for ${target.url}.`, hint: `Run \`arbeit login ${target.url}\`.` });
  return {
    ok: attention.length === 0,
    store: { engine: "service", url: target.url, from: target.from },
    token,
    reachable,
    attention,
  };
}
