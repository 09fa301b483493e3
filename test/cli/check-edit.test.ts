import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { sharedStore } from "../multi-agent/helpers.js";

/**
 * File reservations through the CLI, on SQLite and Postgres: the claim tool's generated command
 * takes --paths, `arbeit query reservations` lists them, and `arbeit check-edit` answers allow /
 * warn / deny with the holder, exiting 1 only when denied.
 */
const postgres = { skip: await postgresSkip() };

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`arbeit check-edit on ${engine}`, { ...(engine === "postgres" ? postgres : {}) }, () => {
    const { dir, env } = sharedStore(engine, "arbeit_checkedit");
    const cli = (args: string[]) => runCli([...args, "--json"], { cwd: dir, env });

    it("denies another session's edit of an exclusively reserved file, naming the holder, and allows the holder's", async () => {
      const reserved = await cli([
        "task",
        "claim",
        "--paths",
        "src/a.ts",
        "--paths",
        "docs/**",
        "--session",
        "ses-alice",
        "--agent",
        "alice",
      ]);
      assert.equal(reserved.code, 0, reserved.stdout + reserved.stderr);
      assert.deepEqual(
        reserved.json.data.reserved.map((r: any) => r.pattern),
        ["src/a.ts", "docs/**"],
      );

      const denied = await cli(["check-edit", "src/a.ts", "docs/x/y.md", "--session", "ses-bob"]);
      assert.equal(denied.code, 1);
      assert.equal(denied.json.data.decision, "deny");
      assert.match(denied.json.data.reason, /src\/a\.ts is reserved exclusively by alice \(session ses-alice\) until/);
      assert.deepEqual(
        denied.json.data.conflicts.map((c: any) => [c.path, c.pattern]),
        [
          ["src/a.ts", "src/a.ts"],
          ["docs/x/y.md", "docs/**"],
        ],
      );
      const own = await cli(["check-edit", "src/a.ts", "--session", "ses-alice"]);
      assert.equal(own.code, 0);
      assert.equal(own.json.data.decision, "allow");

      const listed = await cli(["query", "reservations"]);
      assert.deepEqual(
        listed.json.data.reservations.map((r: any) => [r.pattern, r.session, r.mode]),
        [
          ["docs/**", "ses-alice", "exclusive"],
          ["src/a.ts", "ses-alice", "exclusive"],
        ],
      );
      const usage = await runCli(["check-edit"], { cwd: dir, env });
      assert.equal(usage.code, 2, "naming nothing is a usage error");
    });

    it("doctor accepts a store holding reservations; an import for sharing drops them, --keep-claims keeps them", async () => {
      const doctor = await cli(["doctor"]);
      assert.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
      const file = join(dir, "export.jsonl");
      assert.equal((await cli(["export", file])).code, 0);
      for (const [flags, expected] of [
        [[], 0],
        [["--keep-claims"], 2],
      ] as const) {
        const { dir: other, cleanup } = tempDir();
        try {
          assert.equal((await runCli(["init"], { cwd: other })).code, 0);
          const imported = await runCli(["import", file, ...flags, "--json"], { cwd: other });
          assert.equal(imported.code, 0, imported.stdout + imported.stderr);
          const listed = await runCli(["query", "reservations", "--json"], { cwd: other });
          assert.equal(listed.json.data.reservations.length, expected, flags.join(" "));
        } finally {
          cleanup();
        }
      }
    });
  });
}
