import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openProject } from "../../src/service/project.js";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * `arbeit export <file>`: the file appears only complete, an existing file is replaced only on
 * request, and an interrupted export leaves nothing behind.
 */
let dir: string;
let cleanup: () => void;

before(async () => {
  ({ dir, cleanup } = tempDir("arbeit-export-file-"));
  assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
  const service = await openProject({ cwd: dir });
  const caller = { session: "ses-export", agent: "exporter" };
  // Enough rows that writing them takes a while: the interruption test needs an export in flight.
  for (let i = 0; i < 1500; i++) {
    const { task } = (await service.createTask({ title: `task ${i}`, description: "d".repeat(2000) }, caller)).data;
    await service.addContext({ task_id: task.id, type: "note", content: "n".repeat(2000) }, caller);
  }
  await service.close();
});
after(() => cleanup());

const exportsIn = (folder: string) => readdirSync(folder).filter((name) => name.includes("dump"));

describe("arbeit export <file>", () => {
  it("refuses to replace an existing file without --force, naming it, leaving it as it was and suggesting a new name", async () => {
    const target = join(dir, "dump-existing.jsonl");
    writeFileSync(target, "precious\n");
    const result = await runCli(["export", target, "--json"], { cwd: dir });
    assert.equal(result.code, 1);
    assert.equal(result.json.error.code, "INVALID_ARGUMENT");
    assert.match(result.json.error.message, /already exists/);
    assert.equal(result.json.error.details.path, target);
    // The advice is a new name; replacing the file is not something to suggest to an agent.
    assert.match(result.json.error.suggestions.join(" "), /Name a new file/);
    assert.doesNotMatch(result.json.error.suggestions.join(" "), /--force/);
    assert.equal(readFileSync(target, "utf8"), "precious\n");
  });

  it("replaces it with --force, with a complete export", async () => {
    const target = join(dir, "dump-forced.jsonl");
    writeFileSync(target, "old\n");
    const result = await runCli(["export", target, "--force", "--json"], { cwd: dir });
    assert.equal(result.code, 0, result.stdout);
    const lines = readFileSync(target, "utf8").trimEnd().split("\n");
    assert.equal(lines.length, result.json.data.rows + 1, "the header and every row");
    assert.equal(JSON.parse(lines[0]!).format, "arbeit-export");
  });

  it("leaves neither a partial file nor its temporary file when interrupted", async () => {
    const target = join(dir, "dump-interrupted.jsonl");
    const child = spawn(process.execPath, [CLI, "export", target, "--json"], { cwd: dir, stdio: "ignore" });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    // Interrupt as soon as the export is being written, under its temporary name.
    let seen = false;
    for (let i = 0; i < 2000 && !seen; i++) {
      seen = exportsIn(dir).some((name) => name.startsWith(".dump-interrupted.jsonl.arbeit-export-"));
      if (!seen) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.ok(seen, "the export wrote under a temporary name first");
    child.kill("SIGTERM");
    assert.equal(await exited, 143);
    assert.deepEqual(
      exportsIn(dir).filter((name) => name.includes("interrupted")),
      [],
      "nothing of the interrupted export remains",
    );
  });
});
