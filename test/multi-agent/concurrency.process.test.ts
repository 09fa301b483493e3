import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { before, describe, it } from "node:test";
import { findTool } from "../../src/tools/catalogue.js";
import { invokeTool } from "../../src/tools/envelope.js";
import { runCli } from "../helpers/cli.js";
import { letLeaseRunOut } from "../helpers/expiry.js";
import { postgresSkip } from "../helpers/postgres.js";
import { sharedStore } from "./helpers.js";
import { workerScript } from "./worker-script.js";

const TASKS = 200;
const AGENTS = [
  ["library", "lib-1"],
  ["library", "lib-2"],
  ["library", "lib-3"],
  ["library", "lib-4"],
  ["cli", "cli-1"],
  ["cli", "cli-2"],
  ["cli", "cli-3"],
  ["cli", "cli-4"],
] as const;

interface Line {
  tool: string;
  args: Record<string, unknown>;
  raw: string;
  success: boolean;
  code: string | null;
  token?: string;
}

function runWorker(
  env: Record<string, string>,
  mode: string,
  dir: string,
  agent: string,
  phase: string,
  appends?: number,
  extraEnv: Record<string, string> = {},
): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    const worker = workerScript();
    const args = [worker.script, mode, dir, agent, phase, ...(appends === undefined ? [] : [String(appends)])];
    const child = spawn(process.execPath, args, {
      cwd: dir,
      env: { ...process.env, ...worker.env, ...env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`worker ${agent} exited ${code}: ${err}`));
      else
        resolve(
          out.trim() === ""
            ? []
            : out
                .trim()
                .split("\n")
                .map((line) => JSON.parse(line) as Line),
        );
    });
  });
}

const postgres = { skip: await postgresSkip() };

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`eight processes share one ${engine} database`, {
    timeout: 240_000,
    ...(engine === "postgres" ? postgres : {}),
  }, () => {
    const store = sharedStore(engine, "arbeit_procs");
    const { dir, env } = store;
    const acknowledged: Array<Line & { agent: string }> = [];

    before(async () => {
      for (let i = 0; i < TASKS; i++)
        await store.service.createTask({ title: `job ${i}`, priority: i % 5 }, { session: null, agent: "setup" });
    });

    it("claims every ready task exactly once across eight sessions of one agent, with no lock error reaching any caller, and no event skipped by a cursor", async () => {
      // A reader follows the event log by cursor while the claims commit side by side: with
      // concurrent writers a cursor must still see every event, none committed behind its back.
      const seen: number[] = [];
      let claiming = true;
      const follow = (async () => {
        let after = 0;
        for (;;) {
          const done = !claiming;
          for (;;) {
            const page = await store.service.query(
              { query: "events", params: { after_seq: after, limit: 100 } },
              { session: null, agent: "reader" },
            );
            const { events, next_after_seq } = page.data as { events: Array<{ seq: number }>; next_after_seq: number };
            seen.push(...events.map((event) => event.seq));
            after = next_after_seq;
            if (events.length < 100) break;
          }
          if (done) return;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const results = await Promise.all(AGENTS.map(([mode, agent]) => runWorker(env, mode, dir, agent, "claim")));
      claiming = false;
      await follow;
      const committed = await store.service.store.read((tx) => tx.listEvents({ after_seq: 0, limit: 100_000 }));
      assert.deepEqual(
        seen,
        committed.map((event) => event.seq),
        "the cursor saw every committed event, in order",
      );
      const claimed: string[] = [];
      results.forEach((lines, i) => {
        for (const line of lines) {
          assert.equal(line.success, true, `${AGENTS[i]![1]}: ${line.raw}`);
          const data = JSON.parse(line.raw).data;
          if (data.claimed) {
            claimed.push(data.task.id);
            acknowledged.push({ ...line, agent: AGENTS[i]![1] });
          }
        }
      });
      assert.equal(claimed.length, TASKS);
      assert.equal(new Set(claimed).size, TASKS, "a task was claimed twice");
      const ready = await store.service.query(
        { query: "ready", params: { limit: 10 } },
        { session: null, agent: "check" },
      );
      assert.deepEqual((ready.data as { tasks: unknown[] }).tasks, []);
      assert.ok(results.filter((lines) => lines.length > 1).length >= 2, "work was shared between processes");
    });

    it("loses no acknowledged update under optimistic concurrency", async () => {
      const shared = (
        await store.service.createTask({ title: "shared list", description: "[]" }, { session: null, agent: "setup" })
      ).data.task.id;
      const results = await Promise.all(
        AGENTS.map(([mode, agent]) => runWorker(env, mode, dir, agent, shared, mode === "cli" ? 2 : 6)),
      );
      const tokens: string[] = [];
      results.forEach((lines, i) => {
        for (const line of lines) {
          if (line.success) {
            tokens.push(line.token!);
            acknowledged.push({ ...line, agent: AGENTS[i]![1] });
          } else assert.equal(line.code, "VERSION_CONFLICT", line.raw);
        }
      });
      assert.equal(tokens.length, 4 * 6 + 4 * 2);
      const final = (await store.service.getTask({ task_id: shared })).data.task;
      assert.deepEqual((JSON.parse(final.description!) as string[]).sort(), tokens.sort());
      assert.equal(final.version, 1 + tokens.length);
    });

    it("runs leases on the database's clock: a process an hour fast steals nothing, one an hour slow keeps nothing", async () => {
      const HOUR = 3_600_000;
      const one = async (id: string, tool: string, args: Record<string, unknown>, clockMs = 0) => {
        const [line] = await runWorker(env, "library", dir, id, "call", undefined, {
          WORKER_CALL: JSON.stringify({ tool, args }),
          WORKER_CLOCK_MS: String(clockMs),
        });
        return { ...line!, data: JSON.parse(line!.raw).data, error: JSON.parse(line!.raw).error };
      };
      const make = async (title: string) =>
        (await store.service.createTask({ title }, { session: null, agent: "setup" })).data.task.id;

      // A live lease taken on time is live for a process whose clock runs an hour fast.
      const held = await make("held");
      assert.equal((await one("on-time", "arbeit_task_claim", { task_id: held })).success, true);
      for (const [tool, args] of [
        ["arbeit_task_claim", { task_id: held }],
        ["arbeit_task_start_work", { task_id: held }],
        ["arbeit_task_update", { task_id: held, owner: "thief" }],
        ["arbeit_task_claim", { action: "release", task_id: held }],
      ] as const) {
        const fast = await one("fast", tool, args, HOUR);
        assert.equal(fast.code, "ALREADY_CLAIMED", `${tool}: ${fast.raw}`);
        assert.equal(fast.error.details.owner, "worker");
      }
      // A process an hour slow takes a lease that lives ten minutes on the database's clock, not
      // one that ended fifty minutes ago; and once it has run out, nobody, however slow, still
      // sees it. The lease is ended by moving its stored end into the past, not by waiting: a
      // lease short enough to wait for ran out while the next worker process was still starting
      // on a loaded machine.
      const short = await make("short");
      const slowClaim = await one("slow", "arbeit_task_claim", { task_id: short, lease_seconds: 600 }, -HOUR);
      assert.equal(slowClaim.success, true, slowClaim.raw);
      assert.equal((await one("on-time", "arbeit_task_claim", { task_id: short })).code, "ALREADY_CLAIMED");
      const leaseEnds = Date.parse(slowClaim.data.lease_expires_at);
      assert.ok(
        Math.abs(leaseEnds - (Date.now() + 600_000)) < 120_000,
        "the lease ends ten minutes from the database's now",
      );
      await letLeaseRunOut(store.service.store, short);
      const slowTake = await one("slower", "arbeit_task_claim", { task_id: short }, -HOUR);
      assert.equal(slowTake.success, true, slowTake.raw);

      // A person breaks a live claim deliberately; the event log says who and whose.
      const forced = await one("oncall", "arbeit_task_claim", { action: "release", task_id: held, force: true });
      assert.equal(forced.data.forced, true);
      const log = (
        await store.service.query(
          { query: "events", params: { task_id: held, event_types: ["claim_released"] } },
          { session: null, agent: "check" },
        )
      ).data as { events: Array<{ session_id: string; payload: Record<string, unknown> }> };
      assert.deepEqual(
        log.events.map((event) => [event.session_id, event.payload.reason, event.payload.session]),
        [["ses-oncall", "forced", "ses-on-time"]],
      );

      // Completing frees the session and the claim: the same session starts other work at once.
      const first = await make("first");
      const second = await make("second");
      assert.equal((await one("finisher", "arbeit_task_start_work", { task_id: first })).success, true);
      const done = await one("finisher", "arbeit_task_update", { task_id: first, status: "completed" });
      assert.deepEqual([done.data.task.owner, done.data.task.lease_expires_at], [null, null]);
      assert.equal((await one("finisher", "arbeit_task_start_work", { task_id: second })).success, true);
    });

    it("replays every acknowledged request from its request_id without writing anything", async () => {
      const countRows = async () =>
        JSON.stringify(
          await store.service.store.read(async (tx) => [
            await tx.maxEventSeq(),
            (await tx.listTasks({ limit: 1000, offset: 0 })).map((t) => t.version),
          ]),
        );
      assert.ok(acknowledged.length > TASKS, "the earlier phases acknowledged writes to replay");
      const before = await countRows();
      for (const line of acknowledged) {
        const replay = await invokeTool(findTool(line.tool)!, line.args, {
          caller: { agent: "worker", session: `ses-${line.agent}` },
          cwd: dir,
          service: async () => store.service,
        });
        assert.equal(JSON.stringify(replay), line.raw, `${line.agent} ${line.tool} ${String(line.args.request_id)}`);
      }
      const viaCli = acknowledged.filter((line) => line.agent.startsWith("cli")).slice(0, 3);
      for (const line of viaCli) {
        const result = await runCli(
          ["call", line.tool, JSON.stringify(line.args), "--agent", "worker", "--session", `ses-${line.agent}`],
          { cwd: dir, env },
        );
        assert.equal(result.stdout.trimEnd(), line.raw);
      }
      assert.equal(await countRows(), before);
    });
  });
}
