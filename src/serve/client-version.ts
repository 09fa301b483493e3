import type { IncomingMessage } from "node:http";
import { clientRange, clientStanding, VERSION_HEADER } from "../domain/client-versions.js";
import { Refusal } from "./http.js";

/**
 * Refuses a request from an Arbeit client this service does not serve (docs/team.md#versions),
 * naming both releases. A request that names no release is served, except on /api/hook: curl,
 * scripts, MCP clients and browsers send none and use the stable endpoints, while hook steps are
 * Arbeit's own and change between releases, so a hook request without a release comes from a
 * client older than the exchange of versions.
 */
export function refuseUnservedClient(req: IncomingMessage, path: string, service: string): void {
  const sent = req.headers[VERSION_HEADER.toLowerCase()];
  const range = clientRange(service);
  const serves = `This Arbeit service is release ${service} and serves clients from ${range.oldest} up to (not including) ${range.below}`;
  const details = { service_version: service, clients: range.text };
  if (typeof sent !== "string") {
    if (path !== "/api/hook") return;
    throw new Refusal(
      400,
      "VERSION_UNSUPPORTED",
      `${serves}; this client sent no ${VERSION_HEADER}, so it is older than ${range.oldest}. Nothing was done.`,
      [`Upgrade Arbeit in this checkout to a release from ${range.oldest} (the service runs ${service}).`],
      {},
      { ...details, client_version: null },
    );
  }
  const standing = clientStanding(sent, service);
  if (standing === "served") return;
  const shown = JSON.stringify(sent.slice(0, 40));
  const why =
    standing === "unreadable" ? `${VERSION_HEADER} ${shown} is not a release number` : `this client is release ${sent}`;
  const advice =
    standing === "too-new"
      ? `Upgrade the service first (its administrator runs a release from ${sent} there), or use a client older than ${range.below} here.`
      : `Upgrade Arbeit in this checkout to a release from ${range.oldest} (the service runs ${service}).`;
  throw new Refusal(
    400,
    "VERSION_UNSUPPORTED",
    `${serves}; ${why}. Nothing was done.`,
    [advice],
    {},
    {
      ...details,
      client_version: standing === "unreadable" ? null : sent,
    },
  );
}
