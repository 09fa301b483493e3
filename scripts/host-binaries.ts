// Installs what the end-to-end tests run but the checkout does not depend on, into the test cache:
// the real host binaries (Claude Code, OpenCode, Bun) at the versions test/helpers/hosts.ts pins,
// and the tokenizer the token budgets are measured with (gpt-tokenizer, test/helpers/tokenizer.ts).
// Prints where each is, one `name<TAB>path` line each, or `name<TAB><TAB>why` for one that could
// not be installed. `npm test` runs it before the tests (so parallel test files find them
// installed), and .ci/run first of all, so CI pays for them once, visibly, and stops when one is
// missing.
//   node --import tsx scripts/host-binaries.ts [claude|opencode|bun|gpt-tokenizer ...]   (default: all)
import { HOSTS, type Host, hostBinary, hostMissing } from "../test/helpers/hosts.js";
import { TOKENIZER, tokenizerInstall } from "../test/helpers/tokenizer.js";

const names = [...Object.keys(HOSTS), TOKENIZER.package];
const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !names.includes(name));
if (unknown.length > 0) {
  process.stderr.write(`unknown name ${unknown.join(", ")}; the names are ${names.join(", ")}\n`);
  process.exit(2);
}

/** Installs one of them: where it is, or why it is not. */
function ready(name: string): { path: string; why?: string; spec: string } {
  if (name === TOKENIZER.package) {
    const install = tokenizerInstall();
    return { path: install.dir, why: install.missing, spec: `${TOKENIZER.package}@${TOKENIZER.version}` };
  }
  const host = name as Host;
  return { path: hostBinary(host).path, why: hostMissing(host), spec: `${HOSTS[host].package}@${HOSTS[host].version}` };
}

let missing = 0;
for (const name of asked.length > 0 ? asked : names) {
  const started = Date.now();
  const { path, why, spec } = ready(name);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (why) {
    missing++;
    process.stderr.write(`${spec}: ${why}\n`);
    process.stdout.write(`${name}\t\t${why.replace(/\s+/g, " ")}\n`);
  } else {
    process.stderr.write(`${spec} ready (${seconds} s)\n`);
    process.stdout.write(`${name}\t${path}\n`);
  }
}
process.exit(missing > 0 ? 1 : 0);
