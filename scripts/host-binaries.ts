// Installs the real host binaries the end-to-end tests run (Claude Code, OpenCode, Bun) into the
// test cache, at the versions test/helpers/hosts.ts pins, and prints where each is, one
// `host<TAB>path` line each, or `host<TAB><TAB>why` for one that could not be installed.
// `npm test` runs it before the tests (so parallel test files find them installed), and .ci/run
// first of all, so CI pays for them once, visibly, and stops when one is missing.
//   node --import tsx scripts/host-binaries.ts [claude|opencode|bun ...]   (default: all)
import { HOSTS, type Host, hostBinary, hostMissing } from "../test/helpers/hosts.js";

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in HOSTS));
if (unknown.length > 0) {
  process.stderr.write(`unknown host ${unknown.join(", ")}; the hosts are ${Object.keys(HOSTS).join(", ")}\n`);
  process.exit(2);
}
let missing = 0;
for (const host of (asked.length > 0 ? asked : Object.keys(HOSTS)) as Host[]) {
  const started = Date.now();
  const why = hostMissing(host);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (why) {
    missing++;
    process.stderr.write(`${HOSTS[host].package}@${HOSTS[host].version}: ${why}\n`);
    process.stdout.write(`${host}\t\t${why.replace(/\s+/g, " ")}\n`);
  } else {
    process.stderr.write(`${HOSTS[host].package}@${HOSTS[host].version} ready (${seconds} s)\n`);
    process.stdout.write(`${host}\t${hostBinary(host).path}\n`);
  }
}
process.exit(missing > 0 ? 1 : 0);
