import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { postgresSkip } from "../helpers/postgres.js";
import { sharedStore } from "./helpers.js";

/**
 * File reservations between OS processes on one database, SQLite and Postgres: eight sessions
 * racing for one file (or overlapping patterns) leave exactly one exclusive holder; leases run on
 * the database's clock whatever a process's own clock says; and a session whose claim ran out
 * and moved is fenced from writing to that task.
 */

const WORKER = fileURLToPath(new URL("./worker.ts", import.meta.url));
const TSX = import.meta.resolve("tsx");
const HOUR = 3_600_000;

interface Line {
  success: boolean;
  code: string | null;
  raw: string;
}

/** One call by one worker process (library or CLI), as session ses-<id>, its clock shifted by `clockMs`. */
function one(
  env: Record<string, string>,
  dir: string,
  mode: "library" | "cli",
  id: string,
  tool: string,
  args: Record<string, unknown>,
  clockMs = 0,
  startAt = 0,
): Promise<Line & { data: any; error: any }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX, WORKER, mode, dir, id, "call"], {
      cwd: dir,
      env: {
        ...process.env,
        ...env,
        WORKER_CALL: JSON.stringify({ tool, args }),
        WORKER_CLOCK_MS: String(clockMs),
        WORKER_START_AT: String(startAt),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`worker ${id} exited ${code}: ${err}`));
      const line = JSON.parse(out.trim().split("\n")[0]!) as Line;
      const envelope = JSON.parse(line.raw);
      resolve({ ...line, data: envelope.data, error: envelope.error });
    });
  });
}

const postgres = { skip: await postgresSkip() };
const MODES = ["library", "cli", "library", "cli", "library", "cli", "library", "cli"] as const;

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`file reservations between processes on ${engine}`, {
    timeout: 240_000,
    ...(engine === "postgres" ? postgres : {}),
  }, () => {
    const store = sharedStore(engine, "arbeit_reserve");
    const { dir, env } = store;

    it("eight sessions reserving one file at the same moment leave exactly one exclusive holder", async () => {
      // Each process opens the store first and calls at one agreed moment: a real race.
      const startAt = Date.now() + 8_000;
      const lines = await Promise.all(
        MODES.map((_, i) =>
          one(env, dir, "library", `racer-${i}`, "arbeit_task_claim", { paths: ["src/hot.ts"] }, 0, startAt),
        ),
      );
      const won = lines.filter((line) => line.success);
      assert.equal(won.length, 1, lines.map((line) => line.raw).join("\n"));
      for (const line of lines.filter((l) => !l.success)) assert.equal(line.code, "FILE_RESERVED", line.raw);
      const held = await store.service.query(
        { query: "reservations", params: { path: "src/hot.ts" } },
        { session: null, agent: "check" },
      );
      assert.equal((held.data as any).reservations.length, 1);
    });

    it("eight sessions reserving a folder and files in it at once: the folder's holder alone, or the files' holders and no folder", async () => {
      const startAt = Date.now() + 8_000;
      const lines = await Promise.all(
        MODES.map((mode, i) =>
          one(
            env,
            dir,
            mode,
            `globber-${i}`,
            "arbeit_task_claim",
            { paths: [i % 2 === 0 ? "lib/**" : `lib/part-${i}.ts`] },
            0,
            mode === "library" ? startAt : 0,
          ),
        ),
      );
      const won = lines.filter((line) => line.success).map((line) => JSON.parse(line.raw).data.reserved[0].pattern);
      const all = lines.map((line) => line.raw).join("\n");
      // The four files do not overlap one another, only the folder: whoever came first decides.
      if (won.includes("lib/**")) assert.deepEqual(won, ["lib/**"], all);
      else assert.deepEqual(won.sort(), ["lib/part-1.ts", "lib/part-3.ts", "lib/part-5.ts", "lib/part-7.ts"], all);
      for (const line of lines.filter((l) => !l.success)) assert.equal(line.code, "FILE_RESERVED", line.raw);
    });

    it("runs reservation leases on the database's clock, and fences the session whose claim ran out and moved", async () => {
      const task = (await store.service.createTask({ title: "slow work" }, { session: null, agent: "setup" })).data.task
        .id;
      // A process an hour slow works on the task with a ten-second claim and reservation.
      assert.equal(
        (await one(env, dir, "library", "slow", "arbeit_task_start_work", { task_id: task }, -HOUR)).success,
        true,
      );
      const claimed = await one(
        env,
        dir,
        "library",
        "slow",
        "arbeit_task_claim",
        { task_id: task, lease_seconds: 10 },
        -HOUR,
      );
      assert.equal(claimed.success, true, claimed.raw);
      const reserved = await one(
        env,
        dir,
        "library",
        "slow",
        "arbeit_task_claim",
        { paths: ["src/slow.ts"], lease_seconds: 10 },
        -HOUR,
      );
      assert.equal(reserved.success, true, reserved.raw);
      const until = Date.parse(reserved.data.reserved[0].until);
      assert.ok(
        Math.abs(until - (Date.now() + 10_000)) < 60_000,
        "ten seconds from the database's now, not the process's",
      );

      // A process an hour fast still sees both held.
      assert.equal(
        (await one(env, dir, "library", "fast", "arbeit_task_claim", { paths: ["src/slow.ts"] }, HOUR)).code,
        "FILE_RESERVED",
      );
      assert.equal(
        (await one(env, dir, "library", "fast", "arbeit_task_claim", { task_id: task }, HOUR)).code,
        "ALREADY_CLAIMED",
      );

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now()) + 300));
      // Run out on the database's clock: another session takes both, however slow its own clock.
      assert.equal((await one(env, dir, "cli", "other", "arbeit_task_claim", { task_id: task })).success, true);
      const taken = await one(env, dir, "library", "other", "arbeit_task_claim", { paths: ["src/slow.ts"] }, -HOUR);
      assert.equal(taken.success, true, taken.raw);

      // The stale holder's next write to the task is refused, naming where the claim went.
      const fenced = await one(env, dir, "cli", "slow", "arbeit_progress_add", {
        task_id: task,
        items: ["still here"],
      });
      assert.equal(fenced.code, "CLAIM_MOVED", fenced.raw);
      assert.match(fenced.error.message, /claim moved to worker \(another session, ses-other\)/);
    });
  });
}
