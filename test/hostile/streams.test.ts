import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { it } from "node:test";
import { CLI } from "../helpers/cli.js";
import { forEachEngine } from "./engines.js";

/**
 * What comes in and goes out through pipes: input is read with a bound (a clear error, or for a
 * hook a note and success), and output to a reader that has gone ends the process quietly.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI, feeding `bytes` of `fill` (then `tail`) to stdin in chunks, or closing stdout at once. */
function run(
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    head?: string;
    bytes?: number;
    fill?: string;
    tail?: string;
    closeStdout?: boolean;
  },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    // The reader leaves before the CLI has even started: every write it makes meets a closed pipe.
    if (options.closeStdout) child.stdout.destroy();
    else child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    // The CLI may stop reading early (that is the point): a write it refuses is no failure here.
    child.stdin.on("error", () => {});
    if (options.bytes === undefined) return void child.stdin.end();
    if (options.head) child.stdin.write(options.head);
    const chunk = Buffer.alloc(1024 * 1024, options.fill ?? "a");
    let left = options.bytes;
    const pump = () => {
      while (left > 0) {
        const piece = chunk.subarray(0, Math.min(left, chunk.length));
        left -= piece.length;
        if (!child.stdin.write(piece)) return void child.stdin.once("drain", pump);
      }
      child.stdin.end(options.tail ?? "");
    };
    pump();
  });
}

forEachEngine("bounded input and closed output", (project) => {
  it("a closed stdout ends the CLI quietly, with success, for JSON, help and export", async () => {
    const { dir, env, ok } = await project();
    for (let i = 0; i < 30; i++) await ok("arbeit_task_create", { title: `task ${i} `.padEnd(200, "x") });
    for (const args of [
      ["query", "tasks", "--json"],
      ["call", "arbeit_query", '{"query":"tasks"}'],
      ["--help"],
      ["export"],
    ]) {
      const result = await run(args, { cwd: dir, env, closeStdout: true });
      assert.equal(result.stderr, "", `${args.join(" ")} printed: ${result.stderr}`);
      assert.equal(result.code, 0, args.join(" "));
    }
  });

  it("over 64 MiB of arguments on stdin is INPUT_TOO_LARGE, not a crash", async () => {
    const { dir, env } = await project();
    const result = await run(["call", "arbeit_task_create", "-"], {
      cwd: dir,
      env,
      bytes: 65 * 1024 * 1024,
      fill: " ",
      tail: '{"title": "never"}',
    });
    assert.equal(result.code, 1, result.stderr);
    const envelope = JSON.parse(result.stdout);
    assert.equal(envelope.error.code, "INPUT_TOO_LARGE");
    assert.match(envelope.error.message, /64 MiB/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  });

  it("arguments on stdin under the bound still work", async () => {
    const { dir, env } = await project();
    const result = await run(["call", "arbeit_task_create", "-"], {
      cwd: dir,
      env,
      bytes: 2 * 1024 * 1024,
      fill: " ",
      tail: '{"title": "padded"}',
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(JSON.parse(result.stdout).data.task.title, "padded");
  });

  it("an import line over 64 MiB is INVALID_IMPORT naming the line; nothing is imported", async () => {
    const { cli } = await project();
    const exported = await cli(["export"]);
    assert.equal(exported.code, 0, exported.stderr);
    const header = exported.stdout.split("\n")[0]!;
    const fresh = await project();
    const result = await run(["import", "-", "--json"], {
      cwd: fresh.dir,
      env: fresh.env,
      head: `${header}\n{"table":"tasks","row":{"title":"`,
      bytes: 65 * 1024 * 1024,
      tail: '"}}\n',
    });
    assert.equal(result.code, 1, result.stderr);
    const envelope = JSON.parse(result.stdout);
    assert.equal(envelope.error.code, "INVALID_IMPORT");
    assert.equal(envelope.error.details.line, 2);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    assert.deepEqual((await fresh.ok("arbeit_query", { query: "tasks" })).tasks, []);
  });

  it("a hook payload over its bound is skipped with a note, exit 0, nothing recorded", async () => {
    const { dir, env, ok } = await project();
    const { task } = await ok("arbeit_task_create", { title: "watched" });
    await ok("arbeit_task_start_work", { task_id: task.id }, { session: "ses-big" });
    const head = JSON.stringify({
      session_id: "ses-big",
      hook_event_name: "PostToolUse",
      tool_name: "Read",
      tool_input: { file_path: `${dir}/big.txt` },
      tool_response: { content: "" },
    }).slice(0, -3);
    const result = await run(["hook", "post-tool-use"], {
      cwd: dir,
      env,
      head,
      bytes: 40 * 1024 * 1024,
      fill: "a",
      tail: '"}}',
    });
    assert.equal(result.code, 0);
    assert.match(result.stderr, /over 32 MiB; skipped/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
    const files = await ok("arbeit_task_get", { task_id: task.id, include: ["files"] });
    assert.deepEqual(files.files ?? [], []);
  });
});
