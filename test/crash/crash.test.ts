import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { CLI, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { startWriter, type Writer } from "./writer.js";

/**
 * Crash safety: processes writing through the library and through the real CLI are killed with
 * SIGKILL at random moments, round after round. Afterwards every write any of them acknowledged
 * is there, integrity_check passes and `arbeit doctor` finds nothing.
 *
 * ARBEIT_CRASH_HEAVY=1 runs 200 rounds with three library writers and two CLI writers a round.
 */
const HEAVY = process.env.ARBEIT_CRASH_HEAVY === "1";
const ROUNDS = HEAVY ? 200 : 50;
const LIBRARY_WRITERS = HEAVY ? 3 : 1;
const CLI_WRITERS = HEAVY ? 2 : 1;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One `arbeit call arbeit_task_create`; its id counts only if it printed a success envelope. */
function cliWrite(dir: string, title: string): { child: ChildProcess; done: Promise<string | undefined> } {
  const child = spawn(process.execPath, [CLI, "call", "arbeit_task_create", JSON.stringify({ title })], {
    cwd: dir,
    env: { ...process.env, ARBEIT_AGENT: "cli-writer", ARBEIT_DB: "", ARBEIT_SESSION: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (chunk) => (out += chunk));
  const done = new Promise<string | undefined>((resolve) =>
    child.on("close", (code) => {
      if (code !== 0) return resolve(undefined);
      const envelope = JSON.parse(out);
      assert.equal(envelope.success, true, out);
      resolve(envelope.data.task.id);
    }),
  );
  return { child, done };
}

function createRandom(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
}

describe("SIGKILL at random moments", () => {
  it(`loses no acknowledged write over ${ROUNDS} rounds (library and CLI writers)`, async (t) => {
    const { dir, cleanup } = tempDir();
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
    const random = createRandom(20_260_101);
    const acks: string[] = [];
    let cliTasks = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const writers: Writer[] = Array.from({ length: LIBRARY_WRITERS }, (_, i) => startWriter(dir, `lib-${i}`));
      const clis = Array.from({ length: CLI_WRITERS }, (_, i) => cliWrite(dir, `cli ${round}.${i}`));
      await Promise.race([Promise.all(writers.map((w) => w.ready)), sleep(10_000)]);
      await sleep(random(150));
      for (const child of [...writers.map((w) => w.child), ...clis.map((c) => c.child)]) child.kill("SIGKILL");
      await Promise.all(writers.map((w) => w.exited));
      for (const writer of writers) acks.push(...writer.acks);
      for (const cli of clis) {
        const id = await cli.done;
        if (id) {
          acks.push(`task ${id}`);
          cliTasks++;
        }
      }
    }
    const problems = acks.filter((line) => line.startsWith("error") || line.startsWith("crashed"));
    assert.deepEqual(problems, [], "a writer failed for a reason other than being killed");
    assert.ok(acks.length > ROUNDS, `only ${acks.length} writes were acknowledged`);
    assert.ok(cliTasks > 0, "no CLI write finished before its kill");

    const driver = await openDriver(join(dir, ".arbeit", "arbeit.db"));
    assert.deepEqual(driver.prepare("PRAGMA integrity_check").all(), [{ integrity_check: "ok" }]);
    const exists = (table: string, id: string) =>
      driver.prepare(`SELECT 1 AS found FROM ${table} WHERE id = ?`).get(id) !== undefined;
    const missing: string[] = [];
    for (const line of acks) {
      const [kind, value] = line.split(" ") as [string, string];
      const present =
        kind === "task"
          ? exists("tasks", value)
          : kind === "context"
            ? exists("context_entries", value)
            : kind === "progress"
              ? value.split(",").every((id) => exists("progress_items", id))
              : kind === "completed"
                ? driver.prepare("SELECT status FROM tasks WHERE id = ?").get<{ status: string }>(value)?.status ===
                  "completed"
                : kind === "memory"
                  ? driver.prepare("SELECT 1 AS found FROM memory WHERE key = ?").get(value) !== undefined
                  : false;
      if (!present) missing.push(line);
    }
    driver.close();
    assert.deepEqual(missing, [], `${missing.length} of ${acks.length} acknowledged writes are gone`);

    t.diagnostic(
      `${acks.length} acknowledged writes (${cliTasks} tasks through the CLI) over ${ROUNDS} rounds, all present`,
    );
    const doctor = await runCli(["doctor"], { cwd: dir });
    assert.equal(doctor.code, 0, doctor.stdout);
    assert.equal(doctor.json.ok, true);
    cleanup();
  });
});
