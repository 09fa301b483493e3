/**
 * `npm run fuzz`: the model-based fuzz harness of test/fuzz for 100,000 calls or more, then a
 * report: calls, throughput, outcome codes, and the events each kind of successful call wrote.
 *
 *   npm run fuzz                       # 100,000 calls, random seed
 *   npm run fuzz -- --calls 500000 --seed 42
 */
import fc from "fast-check";
import { newStats, runSteps } from "../test/fuzz/harness.js";
import { stepArbitrary } from "../test/fuzz/steps.js";

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

const target = flag("calls", 100_000);
const firstSeed = flag("seed", Date.now() % 2 ** 31);
const stats = newStats();
process.on("unhandledRejection", (error) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
const started = performance.now();
let seed = firstSeed;
let lastReport = started;

while (stats.calls < target) {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArbitrary(), { minLength: 40, maxLength: 160 }), (steps) =>
      runSteps(steps, stats, { integrityEvery: 1, historyEvery: 50 }),
    ),
    { seed, numRuns: 50, includeErrorInReport: true, endOnFailure: true },
  );
  seed++;
  if (performance.now() - lastReport > 10_000) {
    lastReport = performance.now();
    const rate = stats.calls / ((lastReport - started) / 1000);
    process.stderr.write(`${stats.calls} calls, ${rate.toFixed(0)}/s\n`);
  }
}

const seconds = (performance.now() - started) / 1000;
const lines = [
  `fuzz: ${stats.calls} calls (${stats.successes} succeeded) in ${seconds.toFixed(1)} s: ${(stats.calls / seconds).toFixed(0)} calls/s, every invariant held`,
  `seeds ${firstSeed}..${seed - 1}`,
  "",
  "outcomes:",
  ...[...stats.codes].sort((a, b) => b[1] - a[1]).map(([code, n]) => `  ${code.padEnd(24)} ${n}`),
  "",
  "events per successful call:",
];
for (const [tool, rules] of [...stats.eventRules].sort()) {
  lines.push(`  ${tool}`);
  for (const [rule, n] of [...rules].sort((a, b) => b[1] - a[1])) lines.push(`    ${rule.padEnd(60)} ${n}`);
}
process.stdout.write(`${lines.join("\n")}\n`);
