import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { ArbeitError } from "../../src/domain/errors.js";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { applyPostgresMigrations, listPostgresMigrations } from "../../src/store/postgres/migrate.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import { findTool } from "../../src/tools/catalogue.js";
import { invokeTool } from "../../src/tools/envelope.js";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { adminQuery, dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import {
  bareConnect,
  COUNTING_DELAY_MS,
  counted,
  type NetworkProject,
  networkProject,
  ROUND_TRIP_BUDGETS,
  runNetworkCall,
  targetOf,
  throughProxy,
} from "../helpers/round-trips.js";
import { type RoundTripCounts, startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.js";
import { type Checkout, checkout } from "../remote/harness.js";
import { apiCall, makeToken, type Service, startService } from "../serve/harness.js";

/**
 * What each call costs on the network, counted through a proxy in front of Postgres: one fresh
 * process per call (an agent's shell command, a Claude Code hook), as it runs in a real session.
 * A call fails the test when it needs more round trips than its budget (ROUND_TRIP_BUDGETS).
 */

/** A call through `arbeit serve`: exactly one HTTP request, and the TCP handshake. */
const SERVICE_ROUND_TRIPS = 2;

/** The budget table of docs/postgres.md, as { name: [budget, goal] }. */
function documentedBudgets(): Record<string, [number, number]> {
  const doc = readFileSync(new URL("../../docs/postgres.md", import.meta.url), "utf8");
  const rows: Record<string, [number, number]> = {};
  for (const match of doc.matchAll(/^\| .+? \| `(\w+)` \| (\d+) \| (\d+) \|/gm))
    rows[match[1]!] = [Number(match[2]), Number(match[3])];
  return rows;
}

describe("the counting proxy", () => {
  let echo: Server;
  let proxy: TcpProxy;
  /** Answers every burst from a client with "ok" twice, in two writes. */
  before(async () => {
    echo = createServer((socket) => {
      socket.on("data", (chunk) => {
        if (chunk.toString().includes("?")) {
          socket.write("o");
          setTimeout(() => socket.write("k"), 5);
        }
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    proxy = await startTcpProxy({ target: { host: "127.0.0.1", port: (echo.address() as { port: number }).port } });
  });
  after(async () => {
    await proxy?.close();
    await new Promise<void>((resolve) => echo?.close(() => resolve()));
  });

  /** Opens a connection through the proxy and runs `talk` on it; waits for the close to pass. */
  async function through(talk: (socket: Socket, answer: () => Promise<string>) => Promise<void>) {
    proxy.reset();
    const socket = connect({ host: "127.0.0.1", port: proxy.port });
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    let received = "";
    const answer = () =>
      new Promise<string>((resolve) => {
        const seen = () => {
          if (received.length < 2) return;
          socket.off("data", onData);
          resolve(received);
          received = "";
        };
        const onData = (chunk: Buffer) => {
          received += chunk.toString();
          seen();
        };
        socket.on("data", onData);
      });
    await talk(socket, answer);
    await new Promise<void>((resolve) => {
      socket.once("close", resolve);
      socket.end();
    });
  }

  it("counts the handshake and each answered burst, however many writes each side made", async () => {
    await through(async (socket, answer) => {
      socket.write("a");
      socket.write("b?");
      assert.equal(await answer(), "ok");
      socket.write("c?");
      assert.equal(await answer(), "ok");
    });
    const counts: RoundTripCounts = proxy.counts();
    assert.deepEqual([counts.connections, counts.exchanges, counts.roundTrips], [1, 2, 3]);
    assert.deepEqual([counts.bytesUp, counts.bytesDown], [5, 4]);
  });

  it("does not count bytes the server never answers (a client's goodbye)", async () => {
    await through(async (socket, answer) => {
      socket.write("q?");
      await answer();
      socket.write("bye");
    });
    assert.deepEqual(proxy.counts().roundTrips, 2);
  });

  it("with a delay, holds a new connection's first bytes a round trip, then each direction half of one", async () => {
    proxy.roundTripMs = 40;
    try {
      const start = performance.now();
      await through(async (socket, answer) => {
        socket.write("q?");
        await answer();
      });
      // Never sooner than the network allows: the handshake, then the exchange.
      assert.ok(performance.now() - start >= 80, `answered after ${performance.now() - start} ms`);
    } finally {
      proxy.roundTripMs = 0;
    }
  });
});

describe("round trips to Postgres per call, one fresh process each", { skip: await postgresSkip() }, () => {
  let proxy: TcpProxy;
  let project: NetworkProject;
  let connection: RoundTripCounts;
  const measured = new Map<string, RoundTripCounts>();

  before(async () => {
    // A delay makes the count exact under any load: what a process sends without waiting for an
    // answer (pipelined reads, writes sent with the COMMIT) reaches the proxy before any answer
    // has reached the process, so it is counted with the burst it follows, never as a round trip.
    proxy = await startTcpProxy({ target: targetOf(TEST_DATABASE_URL, 5432), roundTripMs: COUNTING_DELAY_MS });
    project = await networkProject();
    connection = await bareConnect(proxy);
    // In order: each call sees the writes of the ones before it, as in a session.
    for (const call of project.calls)
      measured.set(
        call.name,
        (await counted(proxy, () => runNetworkCall(project.dir, call, project.proxiedEnv(proxy)))).counts,
      );
  });
  after(async () => {
    await project?.close();
    await proxy?.close();
  });

  it("a bare connection costs the TCP handshake and one startup exchange", () => {
    assert.deepEqual([connection.connections, connection.exchanges], [1, 1]);
  });

  it("every budgeted call was counted, and docs/postgres.md shows the same budgets", () => {
    assert.deepEqual([...measured.keys()].sort(), Object.keys(ROUND_TRIP_BUDGETS).sort());
    const documented = documentedBudgets();
    assert.deepEqual(
      documented,
      Object.fromEntries(Object.entries(ROUND_TRIP_BUDGETS).map(([name, { budget, goal }]) => [name, [budget, goal]])),
    );
  });

  for (const [name, { budget }] of Object.entries(ROUND_TRIP_BUDGETS)) {
    it(`${name}: one connection and at most ${budget} round trips once connected`, () => {
      const counts = measured.get(name)!;
      assert.equal(counts.connections, 1, `${name} opened ${counts.connections} connections`);
      const afterConnect = counts.roundTrips - connection.roundTrips;
      assert.ok(
        afterConnect <= budget,
        `${name} needs ${afterConnect} round trips once connected; its budget is ${budget}`,
      );
      if (afterConnect < budget)
        process.stderr.write(
          `\n${name}: ${afterConnect} round trips, under its budget of ${budget}: lower the budget.\n`,
        );
    });
  }
});

describe("round trips to arbeit serve (on Postgres), one fresh process each", { skip: await postgresSkip() }, () => {
  let proxy: TcpProxy;
  let project: NetworkProject;
  let service: Service;
  let laptop: Checkout;

  before(async () => {
    project = await networkProject();
    // The proxy listens first: the service must answer to the proxy's Host.
    proxy = await startTcpProxy();
    service = await startService(project, ["--allow-host", `127.0.0.1:${proxy.port}`]);
    proxy.target = targetOf(service.url, 80);
    const token = await makeToken(project, ["--agent", "laptop-agent"]);
    laptop = checkout();
    const url = `http://127.0.0.1:${proxy.port}`;
    assert.equal((await laptop.cli(["init", "--server", url, "--json"])).code, 0);
    const login = await laptop.cli(["login", url, "--token-stdin", "--json"], { input: `${token}\n` });
    assert.equal(login.code, 0, login.stdout + login.stderr);
  });
  after(async () => {
    await proxy?.close();
    await service?.stop();
    await project?.close();
    laptop?.close();
  });

  /** The service's request log lines for `path` since `from` characters of its stderr. */
  const requestsLogged = (from: number, path = "/api/call") =>
    service
      .stderr()
      .slice(from)
      .split("\n")
      .filter((line) => line.includes(` ${path} `));

  it(`a CLI call is one request and ${SERVICE_ROUND_TRIPS} round trips, the connection included`, async () => {
    const logged = service.stderr().length;
    const { counts, result } = await counted(proxy, () => laptop.cli(["task", "get", project.other, "--json"]));
    assert.equal(result.json?.success, true, result.stdout + result.stderr);
    assert.equal(requestsLogged(logged).length, 1);
    assert.deepEqual([counts.connections, counts.roundTrips], [1, SERVICE_ROUND_TRIPS]);
  });

  it(`the PostToolUse hook is one request and ${SERVICE_ROUND_TRIPS} round trips, the connection included`, async () => {
    const logged = service.stderr().length;
    const payload = hookPayload(laptop.dir, "claude-laptop", "PostToolUse", {
      tool_name: "Read",
      tool_input: { file_path: join(laptop.dir, "README.md") },
      tool_response: { success: true },
      tool_use_id: "toolu_remote",
    });
    const { counts, result } = await counted(proxy, () =>
      runHook("post-tool-use", payload, laptop.dir, { XDG_CONFIG_HOME: laptop.config }),
    );
    assert.equal(result.code, 0);
    assert.equal(requestsLogged(logged, "/api/hook").length, 1);
    assert.deepEqual([counts.connections, counts.roundTrips], [1, SERVICE_ROUND_TRIPS]);
  });
});

describe("round trips arbeit serve makes to Postgres per call", { skip: await postgresSkip() }, () => {
  let proxy: TcpProxy;
  let project: NetworkProject;
  let service: Service;
  let store: PostgresTaskStore;
  let token: string;

  before(async () => {
    project = await networkProject();
    proxy = await startTcpProxy({ target: targetOf(TEST_DATABASE_URL, 5432), roundTripMs: COUNTING_DELAY_MS });
    service = await startService({ ...project, env: project.proxiedEnv(proxy) });
    token = await makeToken(project, ["--agent", "counted"]);
    store = await PostgresTaskStore.open(throughProxy(TEST_DATABASE_URL, proxy), { schema: project.schema });
  });
  after(async () => {
    await service?.stop();
    await store?.close();
    await proxy?.close();
    await project?.close();
  });

  /** The round trips `call` makes, after a first run that warms the pools and prepared statements. */
  async function exchanges(call: () => Promise<{ success: boolean }>): Promise<number> {
    assert.equal((await call()).success, true);
    // The service also talks to Postgres on its own (its webhook deliverer looks for work twice a
    // second): what it does meanwhile only adds, so the fewest of a few counts is the call's own.
    let fewest = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 5; run++) {
      // What the last call set going without waiting (its COMMIT, a token's last use) ends first.
      await new Promise((resolve) => setTimeout(resolve, 5 * COUNTING_DELAY_MS));
      proxy.reset();
      assert.equal((await call()).success, true);
      // A read's COMMIT is sent as its answer is in and not waited for: counted once it is answered.
      await new Promise((resolve) => setTimeout(resolve, 5 * COUNTING_DELAY_MS));
      const counts = proxy.counts();
      // A pool closes a connection left idle 10 s, and opens one again when the service's own work
      // overlaps a call: that run says nothing of the call's own cost.
      if (counts.connections === 0) fewest = Math.min(fewest, counts.exchanges);
    }
    assert.ok(Number.isFinite(fewest), "a warm pool opens no connection for the call");
    return fewest;
  }

  it("a call through the service makes no more than in process: its token and session read again beside the call's own first statements", async () => {
    const inProcess = new ArbeitService(store, { projectRoot: project.dir });
    // A read in sessions that never wrote: the service reads their owners on every call.
    const reading = { session: "ses-counted-reading", parents: ["ses-counted-parent"] };
    for (const [tool, args, sessions] of [
      ["arbeit_task_get", { task_id: project.other }, undefined],
      ["arbeit_task_get", { task_id: project.other }, reading],
      ["arbeit_query", { query: "ready" }, undefined],
      ["arbeit_context_add", { task_id: project.other, type: "note", content: "Counted" }, undefined],
      // Writes whose COMMIT leaves with their final wave in process: the token's check must not hold it back.
      ["arbeit_task_create", { title: "Counted" }, undefined],
      ["arbeit_task_update", { task_id: project.other, priority: 1 }, undefined],
      ["arbeit_resume", {}, undefined],
      ["arbeit_resume", {}, { session: "ses-counted-resuming" }],
    ] as const) {
      const local = await exchanges(() =>
        invokeTool(findTool(tool)!, args, {
          caller: { agent: "counted", ...(sessions ?? { session: "agent:counted" }) },
          cwd: project.dir,
          db: undefined,
          service: async () => inProcess,
        }),
      );
      const served = await exchanges(async () => (await apiCall(service, token, { tool, args, ...sessions })).body);
      const what = `${tool}${sessions ? " in a session of its own" : ""}`;
      assert.ok(served <= local, `${what}: ${served} round trips through the service, ${local} in process`);
    }
  });

  it("a resume in a session with nothing of its own is two round trips, as one with work is: the best ready task is asked with its first reads", async () => {
    const inProcess = new ArbeitService(store, { projectRoot: project.dir });
    const count = await exchanges(() =>
      invokeTool(
        findTool("arbeit_resume")!,
        {},
        {
          caller: { agent: "counted-idle", session: "ses-counted-idle" },
          cwd: project.dir,
          db: undefined,
          service: async () => inProcess,
        },
      ),
    );
    assert.ok(count <= 2, `the resume took ${count} round trips`);
  });
});

describe("a store that checks its schema with the first transaction", { skip: await postgresSkip() }, () => {
  const schemas: string[] = [];
  const caller = { agent: "checker", session: "checker-session" };
  const latest = listPostgresMigrations().length;
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  /** A schema migrated to `version`, as an older Arbeit left it. */
  async function schemaAt(version: number): Promise<string> {
    const schema = uniqueSchema("arbeit_check");
    schemas.push(schema);
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await applyPostgresMigrations(client, schema, "", listPostgresMigrations().slice(0, version));
    } finally {
      await client.end();
    }
    return schema;
  }
  const versionOf = async (schema: string) =>
    Number((await adminQuery(`SELECT MAX(version) AS v FROM "${schema}".schema_migrations`)).rows[0].v);
  const tasksIn = async (schema: string) =>
    Number((await adminQuery(`SELECT COUNT(*) AS n FROM "${schema}".tasks`)).rows[0].n);

  it("a schema one version behind is SCHEMA_TOO_OLD for a teammate's process, and the write sent with the check is rolled back", async () => {
    const schema = await schemaAt(latest - 1);
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, checkSchema: "first-transaction" });
    try {
      const service = new ArbeitService(store, { projectRoot: process.cwd() });
      await assert.rejects(
        service.createTask({ title: "Never written" }, caller),
        (error: unknown) => error instanceof ArbeitError && error.code === "SCHEMA_TOO_OLD",
      );
      assert.equal(await versionOf(schema), latest - 1);
      assert.equal(await tasksIn(schema), 0);
    } finally {
      await store.close();
    }
  });

  it("a schema one version behind is migrated by the deliberate step, and the first write then runs on it", async () => {
    const schema = await schemaAt(latest - 1);
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, {
      schema,
      checkSchema: "first-transaction",
      migrate: true,
    });
    try {
      assert.equal(await versionOf(schema), latest - 1, "opening alone checks nothing");
      const service = new ArbeitService(store, { projectRoot: process.cwd() });
      await service.createTask({ title: "Written after the migration" }, caller);
      assert.equal(await versionOf(schema), latest);
      assert.equal(await tasksIn(schema), 1);
    } finally {
      await store.close();
    }
  });

  it("a schema newer than this code is SCHEMA_TOO_NEW, and the write sent with the check is rolled back", async () => {
    const schema = await schemaAt(latest);
    await adminQuery(
      `INSERT INTO "${schema}".schema_migrations (version, name, applied_at) VALUES ($1, 'from_the_future', $2)`,
      [latest + 1, new Date().toISOString()],
    );
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, checkSchema: "first-transaction" });
    try {
      const service = new ArbeitService(store, { projectRoot: process.cwd() });
      await assert.rejects(
        service.createTask({ title: "Never written" }, caller),
        (error: unknown) => error instanceof ArbeitError && error.code === "SCHEMA_TOO_NEW",
      );
      assert.equal(await tasksIn(schema), 0);
    } finally {
      await store.close();
    }
  });

  it("the first transaction runs on the server's clock even when this machine's is hours off", async () => {
    const schema = await schemaAt(latest);
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, checkSchema: "first-transaction" });
    const realNow = Date.now;
    const twoHours = 2 * 3600_000;
    try {
      Date.now = () => realNow() + twoHours;
      // The time a transaction that reaches the database runs on (one that sends nothing sends no guard either).
      const used = await store.write(async (tx) => {
        await tx.maxEventSeq();
        return tx.databaseNow();
      });
      Date.now = realNow;
      const server = Date.parse(String((await adminQuery("SELECT now() AS now")).rows[0].now));
      assert.ok(
        Math.abs(Date.parse(used) - server) < 60_000,
        `the transaction ran at ${used}, the server's clock says ${new Date(server).toISOString()}`,
      );
    } finally {
      Date.now = realNow;
      await store.close();
    }
  });
});
