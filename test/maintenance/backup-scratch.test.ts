import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * `arbeit backup` writes its copy beside the target first and renames it into place. The target is
 * often in a folder others may write to (/tmp): a symlink planted under the name of that partial
 * copy must not be followed, or the copy (token hashes, webhook secrets) would be written into a
 * file of the planter's choosing.
 */
describe("arbeit backup into a folder where others may plant files", () => {
  let project: { dir: string; cleanup: () => void };
  let shared: { dir: string; cleanup: () => void };
  before(async () => {
    project = tempDir();
    shared = tempDir();
    const init = await runCli(["init"], { cwd: project.dir });
    assert.equal(init.code, 0, init.stdout + init.stderr);
  });
  after(() => {
    project?.cleanup();
    shared?.cleanup();
  });

  it("does not follow a symlink planted at its partial copy's name: the file it points to stays empty", async () => {
    // An empty file the planter can read back: SQLite would take it for a new database.
    const victim = join(shared.dir, "planted.db");
    writeFileSync(victim, "");
    chmodSync(victim, 0o666);
    const target = join(shared.dir, "backup.db");
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const key of ARBEIT_SETTINGS) delete env[key];
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, "backup", target, "--json"], {
        cwd: project.dir,
        env,
        stdio: "ignore",
      });
      // Planted as the process starts, under the names a partial copy could be given from its id.
      symlinkSync(victim, `${target}.partial-${child.pid}`);
      symlinkSync(victim, `${target}.partial-${child.pid}.jsonl`);
      child.on("error", reject);
      child.on("close", resolve);
    });
    assert.equal(code, 0);
    assert.equal(statSync(victim).size, 0, "the copy was written into the planted file");
    assert.equal(statSync(victim).mode & 0o777, 0o666);
    assert.ok(lstatSync(target).isFile(), "the backup is a regular file");
    assert.equal(lstatSync(target).mode & 0o777, 0o600);
    assert.equal(readFileSync(target).subarray(0, 16).toString("latin1"), "SQLite format 3\0");
  });
});
