import { spawnSync } from "node:child_process";

/**
 * A process that file permissions apply to. An ordinary user is one already; root ignores them
 * through three capabilities, so as root the command runs under `setpriv` with those taken out of
 * its bounding set: still root and still the owner of the test's files (and able to reach the
 * checkout, which a fresh `mktemp -d` clone keeps to its owner), but a 0444 file is read-only to
 * it and a 0000 file unreadable, as for anyone else.
 */
const DROP = ["--bounding-set=-dac_override,-dac_read_search,-fowner"];

const asRoot = process.getuid?.() === 0;

/** Why file permissions cannot be made to apply here, or undefined when they can. */
export function filePermissionsMissing(): string | undefined {
  if (!asRoot) return undefined;
  const probe = spawnSync("setpriv", [...DROP, "true"], { stdio: "ignore" });
  return probe.status === 0
    ? undefined
    : "running as root, they need setpriv (util-linux) able to drop capabilities from the bounding set";
}

/** `command args` as a process that file permissions apply to. */
export function withFilePermissions(command: string, args: string[]): [string, string[]] {
  return asRoot ? ["setpriv", [...DROP, command, ...args]] : [command, args];
}
