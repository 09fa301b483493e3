import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { it } from "node:test";
import { forEachEngine } from "./engines.js";

/**
 * Files the CLI reads whole (a batch) are read with the same bound as standard input, in pieces:
 * a file over 64 MiB, or a device that never ends, is INPUT_TOO_LARGE with nothing run. Files it
 * streams (an import) bound each line. A named pipe nobody writes to reads as empty instead of
 * waiting forever for a writer; one with a writer is read like standard input.
 */

const CREATE = (title: string) => JSON.stringify([{ tool: "arbeit_task_create", args: { title } }]);

/** A file of `bytes` bytes: a batch, then spaces (so only its size is wrong). */
function bigFile(path: string, bytes: number) {
  const fd = openSync(path, "w");
  const head = CREATE("too big");
  writeSync(fd, head);
  const spaces = Buffer.alloc(1024 * 1024, " ");
  for (let written = head.length; written < bytes; written += spaces.length) writeSync(fd, spaces);
  closeSync(fd);
}

function fifo(path: string): string {
  execFileSync("mkfifo", [path]);
  return path;
}

forEachEngine("files the CLI reads", (project) => {
  it("a batch file over 64 MiB is INPUT_TOO_LARGE and runs nothing", async () => {
    const p = await project();
    const file = join(p.dir, "big.json");
    bigFile(file, 65 * 1024 * 1024);
    const result = await p.cli(["batch", file]);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.json.error.code, "INPUT_TOO_LARGE", result.json.error.message);
    assert.match(result.json.error.message, /The batch file .*big\.json is over 64 MiB/);
    assert.deepEqual((await p.ok("arbeit_query", { query: "tasks" })).tasks, []);
  });

  it("arbeit batch /dev/zero ends with INPUT_TOO_LARGE", async () => {
    const p = await project();
    const result = await p.cli(["batch", "/dev/zero"]);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.json.error.code, "INPUT_TOO_LARGE");
  });

  it("arbeit import /dev/zero ends with INVALID_IMPORT: its first line is over the line bound", async () => {
    const p = await project();
    const result = await p.cli(["import", "/dev/zero"]);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.json.error.code, "INVALID_IMPORT");
    assert.match(result.json.error.message, /line 1 is over 64 MiB/);
  });

  it("a named pipe nobody writes to reads as empty, for batch and import, instead of waiting for a writer", {
    timeout: 120_000,
  }, async () => {
    const p = await project();
    const pipe = fifo(join(p.dir, "pipe"));
    const batch = await p.cli(["batch", pipe]);
    assert.equal(batch.code, 1, batch.stderr);
    assert.equal(batch.json.error.code, "INVALID_ARGUMENT");
    assert.match(batch.json.error.message, /The batch file .*pipe is empty/);
    const imported = await p.cli(["import", pipe]);
    assert.equal(imported.code, 1, imported.stderr);
    assert.equal(imported.json.error.code, "INVALID_IMPORT");
  });

  it("a named pipe with a writer is read to its end", async () => {
    const p = await project();
    const pipe = fifo(join(p.dir, "pipe"));
    // The writer waits in open() until the CLI opens the pipe, so it is there when the CLI reads.
    const writer = open(pipe, "w").then(async (handle) => {
      await handle.write(CREATE("through a pipe"));
      await handle.close();
    });
    const result = await p.cli(["batch", pipe]);
    await writer;
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.json.data.results[0].data.task.title, "through a pipe");

    // An import through a named pipe, into a new store.
    const dump = (await p.cli(["export"])).stdout;
    const q = await project();
    const importPipe = fifo(join(q.dir, "dump"));
    const dumpWriter = open(importPipe, "w").then(async (handle) => {
      await handle.write(dump);
      await handle.close();
    });
    const imported = await q.cli(["import", importPipe]);
    await dumpWriter;
    assert.equal(imported.code, 0, imported.stdout + imported.stderr);
    const titles = (await q.ok("arbeit_query", { query: "tasks" })).tasks.map((task: { title: string }) => task.title);
    assert.deepEqual(titles, ["through a pipe"]);
  });

  it("a batch file that cannot be read names it: missing, a folder, empty", async () => {
    const p = await project();
    writeFileSync(join(p.dir, "empty.json"), "");
    for (const [name, message] of [
      ["missing.json", /Cannot read the batch file missing\.json: ENOENT/],
      [".", /Cannot read the batch file \.: it is a folder/],
      ["empty.json", /The batch file empty\.json is empty/],
    ] as const) {
      const result = await p.cli(["batch", name]);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.json.error.code, "INVALID_ARGUMENT");
      assert.match(result.json.error.message, message);
    }
  });
});
