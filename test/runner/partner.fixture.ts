// Run by test/runner/summary.test.ts through scripts/test.mjs as two files at once (this one and
// a copy of it): each leaves a mark in ARBEIT_RUNNER_FIXTURE_DIR and passes only when the other's
// mark appears while it is still running, which happens only when the two files run side by side.
import assert from "node:assert/strict";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { it } from "node:test";
import { fileURLToPath } from "node:url";

const dir = process.env.ARBEIT_RUNNER_FIXTURE_DIR ?? "";
const me = basename(fileURLToPath(import.meta.url));

it("meets the other file while both run", async () => {
  assert.ok(existsSync(dir), "ARBEIT_RUNNER_FIXTURE_DIR names a folder");
  writeFileSync(join(dir, me), "");
  const deadline = Date.now() + 60_000;
  while (readdirSync(dir).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(readdirSync(dir).length >= 2, "the other file ran at the same time");
});
