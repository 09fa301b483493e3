import { clientStanding, compareVersions } from "../domain/client-versions.js";
import type { Envelope } from "../domain/envelope.js";
import type { ArbeitError } from "../domain/errors.js";
import type { ServiceReport } from "../serve/status-endpoint.js";
import { version as ownVersion } from "../service/release.js";
import { getFromService, HOOK_TIMEOUT_MS, type ServiceAnswer } from "./client.js";
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
  /** This client's release, and the service's with the clients it serves (when it said). */
  versions: { client: string; service: string | null; clients: string | null };
  /**
   * What the service says with this token (GET /api/status): who the token is, and the picture a
   * local status gives (tasks by status, who works on what, claims). Absent when it could not be asked.
   */
  remote?: Omit<ServiceReport, "service" | "attention">;
  attention: Array<{ code?: string; message: string; hint?: string }>;
}

/** The envelope in a service's answer, if it is one. */
function envelopeOf(answer: ServiceAnswer | undefined): Envelope | undefined {
  try {
    const parsed = JSON.parse(answer?.text ?? "") as Envelope;
    return typeof parsed?.success === "boolean" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export async function serviceStatus(
  target: ServiceTarget,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServiceStatus> {
  const secret = tokenFor(target.url, env);
  const token = env.ARBEIT_TOKEN ? "ARBEIT_TOKEN" : secret === undefined ? "missing" : "stored";
  const client = ownVersion();
  // The same client as the calls, so the same CA file is trusted and a certificate it refuses is said as such.
  const health = await getFromService(target, "/healthz", HOOK_TIMEOUT_MS, env).then(
    (answer) => ({ ok: answer.status >= 200 && answer.status < 300, answer, error: undefined }),
    (error: ArbeitError) => ({ ok: false, answer: undefined, error }),
  );
  const reachable = health.ok;
  const healthEnvelope = envelopeOf(health.answer);
  const said = (healthEnvelope?.success ? healthEnvelope.data : undefined) as
    | { version?: unknown; clients?: unknown }
    | undefined;
  const service = health.answer?.version ?? (typeof said?.version === "string" ? said.version : null);
  const clients = typeof said?.clients === "string" ? said.clients : null;
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
  let remote: ServiceStatus["remote"];
  if (health.answer && secret !== undefined) {
    const answer = await getFromService(target, "/api/status", HOOK_TIMEOUT_MS, env, secret).catch(() => undefined);
    const envelope = envelopeOf(answer);
    if (envelope?.success) {
      const { service: _, attention: theirs, ...rest } = envelope.data as ServiceReport;
      remote = rest;
      attention.push(...theirs);
    } else if (envelope && !envelope.success)
      attention.push({
        code: envelope.error.code,
        message: `The service refused this checkout's status: ${envelope.error.message}`,
        ...(envelope.error.suggestions?.[0] ? { hint: envelope.error.suggestions[0] } : {}),
      });
  }
  // A client the service does not serve is refused on every call; a service that names no release
  // predates the exchange of versions and cannot tell this client apart.
  if (service === null && health.answer)
    attention.push({
      code: "SERVICE_VERSION_UNKNOWN",
      message: `The service at ${target.url} does not say its release: it is older than this client (${client}).`,
      hint: "Upgrade the service; until then its answers to this client's hooks are not checked against their release.",
    });
  else if (
    service !== null &&
    clientStanding(client, service) !== "served" &&
    !attention.some((item) => item.code === "VERSION_UNSUPPORTED")
  )
    attention.push({
      code: "VERSION_UNSUPPORTED",
      message: `The service runs release ${service} and serves clients ${clients ?? "of its own release line"}; this client is ${client}.`,
      hint:
        compareVersions(client, service) > 0
          ? "Upgrade the service first, or use an older client here."
          : `Upgrade Arbeit in this checkout to the service's release (${service}).`,
    });
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
    versions: { client, service, clients },
    ...(remote ? { remote } : {}),
    attention,
  };
}
