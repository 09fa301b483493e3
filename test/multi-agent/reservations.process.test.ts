import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { letLeaseRunOut, letReservationRunOut } from "../helpers/expiry.js";
import { postgresSkip } from "../helpers/postgres.js";
import { sharedStore } from "./helpers.js";
import { workerScript } from "./worker-script.js";

/**
 * File reservations between OS processes on one database, SQLite and Postgres: eight sessions
 * racing for one file (or overlapping patterns) leave exactly one exclusive holder; leases run on
 * the database's clock whatever a process's own clock says; and a session whose claim ran out
 * and moved is fenced from writing to that task.
 */

const HOUR = 3_600_000;

interface Line {
  success: boolean;
  code: string | null;
  raw: string;
}

/**
 * Holds library workers at the start until `count` of them have opened the store, then lets them
 * all make their call at once: a real race, however long each process took to start.
 */
function startingGate(count: number) {
  let arrived = 0;
  let open!: () => void;
  const go = new Promise<void>((resolve) => (open = resolve));
  return {
    go,
    arrive() {
      if (++arrived === count) open();
    },
  };
}
type Gate = ReturnType<typeof startingGate>;

/**
 * One call by one worker process (library or CLI), as session ses-<id>, its clock shifted by
 * `clockMs`; with a gate (library mode), made when the gate opens.
 */
function one(
  env: Record<string, string>,
  dir: string,
  mode: "library" | "cli",
  id: string,
  tool: string,
  args: Record<string, unknown>,
  clockMs = 0,
  gate?: Gate,
): Promise<Line & { data: any; error: any }> {
  return new Promise((resolve, reject) => {
    const worker = workerScript();
    const child = spawn(process.execPath, [worker.script, mode, dir, id, "call"], {
      cwd: dir,
      env: {
        ...process.env,
        ...worker.env,
        ...env,
        WORKER_CALL: JSON.stringify({ tool, args }),
        WORKER_CLOCK_MS: String(clockMs),
        ...(gate ? { WORKER_AT_GATE: "1" } : {}),
      },
      stdio: [gate ? "pipe" : "ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let arrived = false;
    const arrive = () => {
      if (arrived || !gate) return;
      arrived = true;
      gate.arrive();
      void gate.go.then(() => child.stdin?.end("go\n"));
    };
    child.stdout!.on("data", (chunk) => (out += chunk));
    child.stderr!.on("data", (chunk) => {
      err += chunk;
      if (err.includes("at the gate\n")) arrive();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      // A worker that died before the gate must not hold the others there.
      arrive();
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
      // Each process opens the store first; all call at once when every one has: a real race.
      const gate = startingGate(MODES.length);
      const lines = await Promise.all(
        MODES.map((_, i) =>
          one(env, dir, "library", `racer-${i}`, "arbeit_task_claim", { paths: ["src/hot.ts"] }, 0, gate),
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
      const gate = startingGate(MODES.filter((mode) => mode === "library").length);
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
            mode === "library" ? gate : undefined,
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
      // A process an hour slow works on the task with a ten-minute claim and reservation.
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
        { task_id: task, lease_seconds: 600 },
        -HOUR,
      );
      assert.equal(claimed.success, true, claimed.raw);
      const reserved = await one(
        env,
        dir,
        "library",
        "slow",
        "arbeit_task_claim",
        { paths: ["src/slow.ts"], lease_seconds: 600 },
        -HOUR,
      );
      assert.equal(reserved.success, true, reserved.raw);
      const until = Date.parse(reserved.data.reserved[0].until);
      assert.ok(
        Math.abs(until - (Date.now() + 600_000)) < 120_000,
        "ten minutes from the database's now, not the process's",
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

      // Both run out (their stored ends moved into the past rather than waited for: a lease short
      // enough to wait for ran out while the next worker process was still starting on a loaded
      // machine). Run out on the database's clock: another session takes both, however slow its
      // own clock.
      await letLeaseRunOut(store.service.store, task);
      await letReservationRunOut(store.service.store, "src/slow.ts");
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
