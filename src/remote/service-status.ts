import type { ArbeitError } from "../domain/errors.js";
import { getUnauthenticated, HOOK_TIMEOUT_MS } from "./client.js";
import { tokenFor } from "./credentials.js";
import type { ServiceTarget } from "./target.js";

/** What `arbeit status` reports for a checkout that uses a service. */
export interface ServiceStatus {
  ok: boolean;
  store: { engine: "service"; url: string; from: ServiceTarget["from"]; file?: string; ca?: string };
  token: "ARBEIT_TOKEN" | "stored" | "missing";
  /** What GET /healthz said: the service answers and its store does. */
  reachable: boolean;
  /** What was wrong with the service's certificate, when that is why it could not be asked. */
  certificate?: "untrusted" | "expired" | "wrong_name";
  attention: Array<{ message: string; hint?: string }>;
}

export async function serviceStatus(
  target: ServiceTarget,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServiceStatus> {
  const token = env.ARBEIT_TOKEN ? "ARBEIT_TOKEN" : tokenFor(target.url, env) === undefined ? "missing" : "stored";
  // The same client as the calls, so the same CA file is trusted and a certificate it refuses is said as such.
  const health = await getUnauthenticated(target, "/healthz", HOOK_TIMEOUT_MS, env).then(
    (answer) => ({ ok: answer.status >= 200 && answer.status < 300, error: undefined }),
    (error: ArbeitError) => ({ ok: false, error }),
  );
  const reachable = health.ok;
  const attention: ServiceStatus["attention"] = [];
  if (health.error?.details?.cause === "service_certificate" || health.error?.details?.cause === "service_ca")
    attention.push({ message: health.error.message, hint: health.error.suggestions.join(" ") });
  else if (!reachable)
    attention.push({
      message: `The service at ${target.url} does not answer, or its store does not.`,
      hint: "Check that `arbeit serve` runs there and the network reaches it.",
    });
  if (token === "missing")
    attention.push({ message: `No token for ${target.url}.`, hint: `Run \`arbeit login ${target.url}\`.` });
  return {
    ok: attention.length === 0,
    store: {
      engine: "service",
      url: target.url,
      from: target.from,
      ...(target.file ? { file: target.file } : {}),
      ...(target.ca ? { ca: target.ca } : {}),
    },
    token,
    reachable,
    ...(health.error?.details?.cause === "service_certificate"
      ? { certificate: health.error.details.problem as NonNullable<ServiceStatus["certificate"]> }
      : {}),
    attention,
  };
}
