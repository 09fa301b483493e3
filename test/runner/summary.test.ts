import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURE = "test/runner/skips.fixture.ts";

function runTests(env: Record<string, string>) {
  // Without the outer runner's NODE_TEST_CONTEXT, which would make the inner run report to it.
  const { NODE_TEST_CONTEXT: _, ...outer } = process.env;
  const result = spawnSync(process.execPath, [join(ROOT, "scripts", "test.mjs"), FIXTURE], {
    cwd: ROOT,
    env: { ...outer, ...env },
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: result.status, output: result.stdout + result.stderr };
}

describe("npm test's summary line", () => {
  it("counts a skipped test and a skipped describe block, and names both", () => {
    const { code, output } = runTests({ CI: "false" });
    assert.equal(code, 0, output);
    assert.match(output, /^1 passed, 0 failed, 2 skipped$/m);
    assert.match(output, /a suite that needs a missing host \(skip: no such host here\)/);
    assert.match(output, /skips one test \(skip: not on this machine\)/);
  });

  it("fails under CI=true when anything skipped", () => {
    const { code, output } = runTests({ CI: "true" });
    assert.equal(code, 1, output);
    assert.match(output, /Under CI=true nothing may skip/);
    assert.match(output, /^1 passed, 1 failed, 2 skipped$/m);
  });
});
