/**
 * Where a webhook may deliver. A delivery is a POST made by the machine that runs `arbeit ui` or
 * `arbeit serve`, from inside its network: a URL naming that machine or its private network
 * would let whoever adds a webhook make the service post to what the outside cannot reach (an
 * admin port on loopback, a cloud metadata address). Such targets need a person's explicit
 * allowance. A URL holding a user name or password is never deliverable: fetch refuses to send
 * one.
 *
 * @example
 * targetProblem(new URL("http://127.0.0.1:9000/hook")) // { reason: "private", ... }
 * targetProblem(new URL("https://hooks.slack.com/services/T/B/X")) // undefined
 */

export type TargetProblem = { reason: "credentials" | "private"; message: string };

/** Names that by convention resolve to this machine or a private network, never to the Internet. */
const PRIVATE_NAME = /(^|\.)(localhost|local|internal|home\.arpa)\.?$/;

/** IPv4 ranges that are not the public Internet: [base address, prefix length, what it is]. */
const PRIVATE_V4: Array<[number, number, string]> = [
  [0x00000000, 8, "this network (0.0.0.0/8, which reaches this machine)"],
  [0x0a000000, 8, "a private network (10.0.0.0/8)"],
  [0x64400000, 10, "carrier-grade NAT (100.64.0.0/10)"],
  [0x7f000000, 8, "loopback (127.0.0.0/8)"],
  [0xa9fe0000, 16, "link-local (169.254.0.0/16, where cloud metadata services live)"],
  [0xac100000, 12, "a private network (172.16.0.0/12)"],
  [0xc0a80000, 16, "a private network (192.168.0.0/16)"],
  [0xc6120000, 15, "a benchmarking network (198.18.0.0/15)"],
  [0xe0000000, 3, "multicast or reserved (224.0.0.0/3)"],
];

function v4Problem(address: number): string | undefined {
  for (const [base, bits, name] of PRIVATE_V4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === base) return name;
  }
  return undefined;
}

/** A dotted IPv4 address as WHATWG URL writes a host (it has already read 127.1, 0x7f.1, 2130706433). */
function parseV4(host: string): number | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((sum, part) => sum * 256 + Number(part), 0);
}

/** An IPv6 address as eight 16-bit groups (URL writes it compressed and in hex, without a dotted tail). */
function parseV6(host: string): number[] | undefined {
  const halves = host.split("::");
  if (halves.length > 2) return undefined;
  const groups = (text: string) => (text === "" ? [] : text.split(":").map((group) => Number.parseInt(group, 16)));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array<number>(Math.max(fill, 0)).fill(0), ...tail];
  return all.length === 8 && all.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? all
    : undefined;
}

function v6Problem(g: number[]): string | undefined {
  const v4 = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo;
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 8)) return "the unspecified address (::, which reaches this machine)";
  if (zeros(0, 7) && g[7] === 1) return "loopback (::1)";
  // Addresses that carry an IPv4 address: judged by it.
  const embedded =
    zeros(0, 5) && g[5] === 0xffff
      ? "an IPv4-mapped address"
      : zeros(0, 6)
        ? "an IPv4-compatible address"
        : g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)
          ? "a NAT64 address"
          : undefined;
  if (embedded) {
    const problem = v4Problem(v4(g[6]!, g[7]!));
    return problem ? `${embedded} of ${problem}` : undefined;
  }
  if (g[0] === 0x2002) {
    const problem = v4Problem(v4(g[1]!, g[2]!));
    if (problem) return `a 6to4 address of ${problem}`;
  }
  if ((g[0]! & 0xffc0) === 0xfe80) return "link-local (fe80::/10)";
  if ((g[0]! & 0xffc0) === 0xfec0) return "site-local (fec0::/10)";
  if ((g[0]! & 0xfe00) === 0xfc00) return "a unique local address (fc00::/7)";
  if ((g[0]! & 0xff00) === 0xff00) return "multicast (ff00::/8)";
  return undefined;
}

/** Why a webhook may not deliver to `url` without a person's allowance; undefined when it may. */
export function targetProblem(url: URL): TargetProblem | undefined {
  if (url.username !== "" || url.password !== "")
    return {
      reason: "credentials",
      message: "it holds a user name or password (user:pass@), which no delivery can send",
    };
  const host = url.hostname.toLowerCase();
  let problem: string | undefined;
  if (host.startsWith("[")) {
    const groups = parseV6(host.slice(1, -1));
    problem = groups ? v6Problem(groups) : undefined;
  } else {
    const v4 = parseV4(host);
    problem = v4 !== undefined ? v4Problem(v4) : PRIVATE_NAME.test(host) ? `a local name (${host})` : undefined;
  }
  return problem ? { reason: "private", message: `its host is ${problem}` } : undefined;
}
