/**
 * Tests that need something outside the repository (Postgres, a host binary, a terminal) skip
 * when it is missing on a developer's machine, saying so on stderr, and fail under CI=true, where
 * .ci/run installs everything: CI must never pass by skipping.
 *
 * Returns the `skip` option for node:test: false when the requirement is met.
 */
export function requirement(what: string, missing: string | undefined): string | false {
  if (missing === undefined) return false;
  const ci = process.env.CI;
  if (ci && ci !== "false" && ci !== "0") {
    throw new Error(`${what} is required under CI=${ci}, but ${missing}.`);
  }
  // scripts/test.mjs counts these lines: Bun does not report a skipped describe block at all.
  process.stderr.write(`\nSKIPPING ${what}: ${missing}.\n`);
  return `${what}: ${missing}`;
}
