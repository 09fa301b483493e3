/**
 * Which Arbeit clients a service serves. Arbeit's own clients (the CLI, the hooks, the OpenCode
 * plugin, `arbeit mcp`) send their release in the `Arbeit-Version` header; the service answers
 * with its own on every answer. A service serves clients from OLDEST_CLIENT up to the end of its
 * own release line: a client of a newer line may send what this service cannot read, and an
 * older one than OLDEST_CLIENT sends hook steps it no longer reads, so both are refused by name
 * instead of answered with errors a hook would pass over.
 */

/** The header both sides send. */
export const VERSION_HEADER = "Arbeit-Version";

/**
 * The oldest client release whose requests this service reads. Raise it only when a request or a
 * hook step changes so that an older client's would be misread; a release that only adds keeps
 * serving the previous one, so a service can be upgraded before its clients.
 */
export const OLDEST_CLIENT = "0.1.0";

type Triple = [number, number, number];

/** `1.2.3` (a pre-release or build suffix is read as its release); undefined when it is not a version. */
export function parseVersion(text: string): Triple | undefined {
  const match = /^(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:[-+][0-9A-Za-z.+-]{0,64})?$/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

function compare(a: Triple, b: Triple): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** The first release after the line of `service` (for 0.x, each minor release is a line of its own). */
function nextLine(service: Triple): Triple {
  return service[0] > 0 ? [service[0] + 1, 0, 0] : [0, service[1] + 1, 0];
}

/** The clients a service of release `service` serves: from `oldest`, up to but not including `below`. */
export interface ClientRange {
  oldest: string;
  below: string;
  /** As /healthz shows it: `>=0.1.0 <0.2.0`. */
  text: string;
}

export function clientRange(service: string): ClientRange {
  const own = parseVersion(service) ?? [0, 0, 0];
  const below = nextLine(own).join(".");
  return { oldest: OLDEST_CLIENT, below, text: `>=${OLDEST_CLIENT} <${below}` };
}

/** Where a client of release `client` stands to a service of release `service`. */
export type ClientStanding = "served" | "too-old" | "too-new" | "unreadable";

export function clientStanding(client: string, service: string): ClientStanding {
  const sent = parseVersion(client);
  if (!sent) return "unreadable";
  const range = clientRange(service);
  if (compare(sent, parseVersion(range.oldest)!) < 0) return "too-old";
  if (compare(sent, parseVersion(range.below)!) >= 0) return "too-new";
  return "served";
}

/** -1, 0 or 1: whether release `a` is older than, the same as or newer than `b` (unreadable: 0). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [parseVersion(a), parseVersion(b)];
  if (!x || !y) return 0;
  return Math.sign(compare(x, y));
}
