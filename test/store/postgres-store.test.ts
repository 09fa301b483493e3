import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pg from "pg";
import { ArbeitError } from "../../src/domain/errors.js";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { lockKey } from "../../src/store/postgres/config.js";
import { applyPostgresMigrations, listPostgresMigrations } from "../../src/store/postgres/migrate.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import { assignedToSql } from "../../src/store/sql/claims.js";
import type { SqlDb } from "../../src/store/sql/database.js";
import { postgresDialect } from "../../src/store/sql/dialect.js";
import { readyStatement } from "../../src/store/sql/ready.js";
import { heldByOthersSql } from "../../src/store/sql/reservations.js";
import { TASK_ORDER, taskColumns } from "../../src/store/sql/task-columns.js";
import { listMigrations } from "../../src/store/sqlite/migrate.js";
import { adminQuery, dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";

const skip = await postgresSkip();
const runtime = typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? "node" : "bun";
const caller = { session: "ses-pg", agent: "pg-test" };

/**
 * Polls until `check` holds. The bound only turns a hang into a failure that says what never
 * happened; nothing here claims how fast anything is.
 */
async function eventually(what: string, check: () => Promise<boolean>, boundMs = 60_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`never happened within ${boundMs / 1000} s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What only the Postgres store has: its schema, migrations, connection handling and locking. */
describe(`Postgres store under ${runtime}`, { skip }, () => {
  const schemas: string[] = [];
  const fresh = () => {
    const schema = uniqueSchema("arbeit_pgstore");
    schemas.push(schema);
    return schema;
  };
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  const version = async (schema: string) =>
    Number((await adminQuery(`SELECT MAX(version) AS v FROM "${schema}".schema_migrations`)).rows[0].v);

  it("has a Postgres migration for every SQLite one, numbered alike", () => {
    assert.deepEqual(
      listPostgresMigrations().map((m) => m.name),
      listMigrations().map((m) => m.name),
    );
  });

  it("creates its schema on first open and migrates it to the newest version", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    assert.equal(await version(schema), listPostgresMigrations().length);
    assert.equal(store.schema, schema);
    await store.close();
    const again = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    await again.close();
    const applied = await adminQuery(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
    assert.deepEqual(
      applied.rows.map((r) => r.version),
      listPostgresMigrations().map((m) => m.version),
    );
  });

  it("brings memory written at schema v4 forward: every entry counts as set once", async () => {
    const schema = fresh();
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await applyPostgresMigrations(client, schema, "", listPostgresMigrations().slice(0, 4));
    } finally {
      await client.end();
    }
    await adminQuery(
      `INSERT INTO "${schema}".memory (id, scope, scope_id, key, value, expires_at, created_at, updated_at)
       VALUES ('mem-v4v4v4v4', 'project', '', 'style', '"terse"', NULL, '2026-11-25T12:00:00.000Z', '2026-11-25T12:00:00.000Z')`,
    );
    // Upgrading a schema in use is the deliberate step (`arbeit migrate`, `arbeit serve` at start).
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, migrate: true });
    try {
      assert.equal(await version(schema), listPostgresMigrations().length);
      const service = new ArbeitService(store, { projectRoot: process.cwd() });
      const { entry } = (await service.memory({ action: "get", key: "style" }, caller)).data as any;
      assert.deepEqual([entry.value, entry.reinforced], ["terse", 1]);
      const again = (await service.memory({ action: "set", key: "style", value: "terse" }, caller)).data as any;
      assert.deepEqual([again.entry.id, again.entry.reinforced], ["mem-v4v4v4v4", 2]);
    } finally {
      await store.close();
    }
  });

  it("migrates exactly once when many machines open a fresh schema at the same moment", async () => {
    const schema = fresh();
    const stores = await Promise.all(
      Array.from({ length: 6 }, () => PostgresTaskStore.open(TEST_DATABASE_URL, { schema, maxConnections: 1 })),
    );
    const applied = await adminQuery(`SELECT COUNT(*) AS n FROM "${schema}".schema_migrations`);
    assert.equal(Number(applied.rows[0].n), listPostgresMigrations().length);
    await Promise.all(stores.map((store) => store.close()));
  });

  it("refuses a schema newer than the code with SCHEMA_TOO_NEW", async () => {
    const schema = fresh();
    await (await PostgresTaskStore.open(TEST_DATABASE_URL, { schema })).close();
    await adminQuery(`INSERT INTO "${schema}".schema_migrations VALUES ($1, 'from_the_future', '2099-01-01')`, [
      listPostgresMigrations().length + 1,
    ]);
    await assert.rejects(
      PostgresTaskStore.open(TEST_DATABASE_URL, { schema }),
      (error: unknown) => error instanceof ArbeitError && error.code === "SCHEMA_TOO_NEW",
    );
  });

  it("stores timestamps and JSON as text, byte for byte, in C collation", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    const service = new ArbeitService(store, { projectRoot: "/tmp", now: () => new Date("2026-01-01T00:00:00Z") });
    const { data } = await service.createTask({ title: "t" }, caller);
    await service.addContext(
      { task_id: data.task.id, type: "note", content: "c", metadata: { b: 1, a: [2, { z: null }] } },
      caller,
    );
    await store.close();
    const row = await adminQuery(`SELECT created_at, pg_typeof(created_at)::text AS type FROM "${schema}".tasks`);
    assert.deepEqual(row.rows[0], { created_at: "2026-01-01T00:00:00.000Z", type: "text" });
    const meta = await adminQuery(`SELECT metadata FROM "${schema}".context_entries`);
    assert.equal(meta.rows[0].metadata, '{"b":1,"a":[2,{"z":null}]}');
    const collations = await adminQuery(
      `SELECT DISTINCT collation_name FROM information_schema.columns
       WHERE table_schema = $1 AND data_type = 'text' AND table_name <> 'schema_migrations'`,
      [schema],
    );
    assert.deepEqual(
      collations.rows.map((r) => r.collation_name),
      ["C"],
    );
  });

  it("keeps schemas apart: two projects on one database see only their own tasks", async () => {
    const [one, two] = [fresh(), fresh()];
    const a = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: one });
    const b = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: two });
    await new ArbeitService(a, { projectRoot: "/tmp" }).createTask({ title: "in one" }, caller);
    const seen = await b.read((tx) => tx.listTasks({ limit: 10, offset: 0 }));
    assert.deepEqual(seen, []);
    await Promise.all([a.close(), b.close()]);
  });

  it("names where it is without the password, and refuses bad schema names and URLs", async () => {
    const schema = fresh();
    const url = new URL(TEST_DATABASE_URL);
    // A URL the suite can open with a password in it: the test server's own if it has one, else
    // one trust auth (the documented test setup) accepts and ignores.
    if (!url.password) url.password = process.env.PGPASSWORD ?? "pw-9f3k2x";
    const secret = decodeURIComponent(url.password);
    const store = await PostgresTaskStore.open(url.href, { schema });
    try {
      assert.ok(!store.location.includes(secret), store.location);
      assert.ok(store.location.endsWith(`${url.host}${url.pathname} (schema ${schema})`), store.location);
    } finally {
      await store.close();
    }
    // A failed open names the server in its error, and still not the password.
    const missing = new URL(url.href);
    missing.pathname = `/arbeit_no_such_database_${process.pid}`;
    await assert.rejects(PostgresTaskStore.open(missing.href, { schema }), (error: unknown) => {
      assert.ok(error instanceof ArbeitError, String(error));
      assert.equal(error.code, "STORE_UNAVAILABLE");
      assert.match(error.message, new RegExp(`arbeit_no_such_database_${process.pid}`));
      assert.ok(!JSON.stringify(error.toBody()).includes(secret), JSON.stringify(error.toBody()));
      return true;
    });
    for (const bad of ['x"; DROP SCHEMA public; --', "1abc", "", "a".repeat(64)]) {
      await assert.rejects(
        PostgresTaskStore.open(TEST_DATABASE_URL, { schema: bad }),
        (error: unknown) => error instanceof ArbeitError && error.code === "INVALID_ARGUMENT",
        bad,
      );
    }
    await assert.rejects(
      PostgresTaskStore.open("mysql://localhost/x"),
      (error: unknown) => error instanceof ArbeitError && error.code === "INVALID_ARGUMENT",
    );
  });

  it("reports an unreachable server as an error that names it, not a crash", async () => {
    await assert.rejects(
      PostgresTaskStore.open("postgres://nobody:pw@127.0.0.1:1/none", { schema: "x" }),
      (error: unknown) =>
        error instanceof ArbeitError &&
        error.code === "STORE_UNAVAILABLE" &&
        /Could not connect to Postgres at postgres:\/\/nobody@127\.0\.0\.1:1\/none/.test(error.message) &&
        !error.message.includes("pw@"),
    );
  });

  it("serialises only what needs it: graph checks hold the graph lock, a plain update does not", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    const service = new ArbeitService(store, { projectRoot: "/tmp" });
    const [space, key] = lockKey(schema);
    const probe = `SELECT pg_try_advisory_xact_lock(${space}, ${key}) AS free`;
    const free = async () => (await adminQuery(probe)).rows[0].free as boolean;
    const a = (await service.createTask({ title: "a" }, caller)).data.task.id;
    const b = (await service.createTask({ title: "b" }, caller)).data.task.id;
    assert.equal(await free(), true, "free between transactions");
    assert.equal(await store.write(async (tx) => (await tx.updateTask(a, { title: "a2" }, "t"), free())), true);
    assert.equal(await store.write(async (tx) => (await tx.lockGraph(), free())), false, "held once taken");
    assert.equal(await store.read(() => free()), true, "reads never take it");
    // Another writer holding the graph lock does not stop a plain update or a claim.
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT pg_advisory_xact_lock($1, $2)", [space, key]);
      const updated = await service.updateTask({ task_id: a, priority: 0 }, caller);
      assert.equal(updated.data.task.priority, 0);
      const claimed = await service.claim({ task_id: b }, caller);
      assert.equal("claimed" in claimed.data && claimed.data.claimed, true);
      await other.query("COMMIT");
    } finally {
      await other.end();
      await store.close();
    }
  });

  it("re-runs a transaction that Postgres aborted as a deadlock victim; the caller sees success", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    const service = new ArbeitService(store, { projectRoot: "/tmp" });
    const id = (await service.createTask({ title: "contended" }, caller)).data.task.id;
    const blocker = (await service.createTask({ title: "blocker" }, caller)).data.task.id;
    const [space, key] = lockKey(schema);
    const deadlocks = async () =>
      Number(
        (await adminQuery("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")).rows[0]
          .deadlocks,
      );
    const before = await deadlocks();
    // Another session (not Arbeit) locks the task's row. Arbeit's update of blocked_by takes the
    // graph lock, then waits for the row; the other session then asks for the graph lock: a
    // deadlock. That session waits longer before checking for deadlocks, so Postgres aborts the
    // Arbeit side, which must run again once the other session is done.
    const other = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await other.connect();
    try {
      await other.query("SET deadlock_timeout = '20s'");
      await other.query("BEGIN");
      await other.query(`UPDATE "${schema}".tasks SET title = title WHERE id = $1`, [id]);
      const otherPid = (await other.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      let settled = false;
      const update = service
        .updateTask({ task_id: id, title: "after the deadlock", blocked_by: [blocker] }, caller)
        .finally(() => {
          settled = true;
        });
      await eventually("Arbeit's writer came to wait for the locked row", async () => {
        // Asked of the lock graph, not the query text: pg_stat_activity cuts a long query short.
        const waiting = await adminQuery(
          "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
          [otherPid],
        );
        return Number(waiting.rows[0].n) > 0;
      });
      await other.query("SELECT pg_advisory_xact_lock($1, $2)", [space, key]);
      assert.equal(settled, false, "Arbeit gave up its lock by rolling back, and is still at work");
      await other.query("COMMIT");
      const result = await update;
      assert.equal(result.data.task.title, "after the deadlock");
      assert.deepEqual(result.data.task.blocked_by, [blocker]);
      assert.equal(result.data.task.version, 2);
      assert.deepEqual(store.retries, { "40P01": 1 }, "run again once, after a deadlock");
    } finally {
      await other.end();
      await store.close();
    }
    // The server's own word that a deadlock was detected, beside the store's count of 40P01s. A
    // backend hands in its statistics by the time it ends, and closing the store ended the one
    // that was chosen as the victim.
    await eventually("Postgres counted the deadlock in pg_stat_database", async () => (await deadlocks()) > before);
  });

  it("plans each statement once per connection, not again at every call", async () => {
    const schema = fresh();
    // One connection, so every call below runs on the connection asked about afterwards.
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, maxConnections: 1 });
    try {
      const service = new ArbeitService(store, { projectRoot: "/tmp" });
      for (let i = 0; i < 3; i++) await service.createTask({ title: `task ${i}` }, caller);
      for (let i = 0; i < 8; i++) await service.query({ query: "ready", params: { limit: 20 } }, caller);
      const plans = await store.transaction("read", (db) =>
        db.all(`SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
          WHERE statement LIKE '%WITH free AS%' AND statement NOT LIKE '%pg_prepared_statements%'`),
      );
      assert.ok(plans.length > 0, "the ready read is a prepared statement of the connection");
      for (const plan of plans) {
        assert.equal(Number(plan.custom_plans), 0, `planned per call: ${String(plan.statement).slice(0, 80)}`);
        assert.ok(Number(plan.generic_plans) >= 8, "its one plan served every call");
      }
    } finally {
      await store.close();
    }
  });

  it("compiles no statement with JIT, which would cost more than running it", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    try {
      const plan = await store.transaction("read", async (db) => {
        // Any cost would pass the threshold: only the store's own setting keeps JIT out.
        await db.run("SET LOCAL jit_above_cost = 0");
        return (await db.all("EXPLAIN (ANALYZE) SELECT COUNT(*) AS n FROM tasks"))
          .map((row) => String(row["QUERY PLAN"]))
          .join("\n");
      });
      assert.doesNotMatch(plan, /JIT:/, plan);
    } finally {
      await store.close();
    }
  });

  it("starts no parallel workers, which cost more than any of its statements runs", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    try {
      const service = new ArbeitService(store, { projectRoot: "/tmp" });
      for (let i = 0; i < 3; i++) await service.createTask({ title: `task ${i}` }, caller);
      const plan = await store.transaction("read", async (db) => {
        // Parallel plans made as cheap as they can be: only the store's own setting keeps them out.
        for (const setting of ["parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size"])
          await db.run(`SET LOCAL ${setting} = 0`);
        return (await db.all("EXPLAIN SELECT COUNT(*) AS n FROM tasks WHERE title <> ''"))
          .map((row) => String(row["QUERY PLAN"]))
          .join("\n");
      });
      assert.doesNotMatch(plan, /Gather|Parallel/, plan);
    } finally {
      await store.close();
    }
  });

  it("plans ready from the ready index on a freshly filled schema, with no statistics gathered since", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    const service = new ArbeitService(store, { projectRoot: "/tmp" });
    // Thousands of tasks written after the migration's ANALYZE saw an empty table: the planner's
    // statistics say "empty", the kind of guess that once made ready take tens of seconds.
    await store.write(async () => {
      for (let i = 0; i < 3000; i++) await service.createTask({ title: `task ${i}`, priority: i % 5 }, caller);
    });
    const plan = async (forUpdate: boolean, withFiles: boolean) => {
      const filter = { now: new Date().toISOString(), agent: "a", session: "s", limit: 20, offset: 0 };
      const { sql, params } = readyStatement(postgresDialect, filter, forUpdate, withFiles);
      const rows = await store.transaction(forUpdate ? "write" : "read", (db) => db.all(`EXPLAIN ${sql}`, ...params));
      return rows.map((row) => String(row["QUERY PLAN"])).join("\n");
    };
    // As planning reads it too: each task with the files stored for it.
    for (const forUpdate of [false, true])
      for (const withFiles of [false, true]) {
        const text = await plan(forUpdate, withFiles);
        assert.match(text, /idx_tasks_ready_leaves/, text);
        assert.doesNotMatch(text, /Seq Scan on tasks/, text);
      }
    const ready = await service.query({ query: "ready", params: { limit: 3 } }, caller);
    assert.equal((ready.data as { tasks: unknown[] }).tasks.length, 3);
    await store.close();
  });

  it("reads the work other sessions hold newest lease first, stopping at 200, however many tasks are claimed", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    try {
      const service = new ArbeitService(store, { projectRoot: "/tmp" });
      await store.write(async () => {
        for (let i = 0; i < 3000; i++) await service.createTask({ title: `task ${i}` }, caller);
      });
      // 2,000 of them claimed by eight other sessions, leases spread over the next hour.
      await adminQuery(`UPDATE "${schema}".tasks SET owner = 'other', claim_session = 'ses-' || (random() * 8)::int,
          lease_expires_at = to_char((now() + random() * interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        WHERE id IN (SELECT id FROM "${schema}".tasks ORDER BY id LIMIT 2000)`);
      await adminQuery(`ANALYZE "${schema}".tasks`);
      const now = new Date().toISOString();
      // As a pooled connection runs it after a few calls: one plan for any parameters.
      const plan = await store.transaction("write", async (db) => {
        await db.run("SET LOCAL plan_cache_mode = force_generic_plan");
        return (await db.all(`EXPLAIN ${heldByOthersSql(postgresDialect)}`, now, caller.session))
          .map((row) => String(row["QUERY PLAN"]))
          .join("\n");
      });
      assert.match(plan, /Index Scan Backward using idx_tasks_lease/, plan);
      assert.doesNotMatch(plan, /idx_tasks_claim_session|Seq Scan on tasks/, plan);
      const held = await store.transaction("read", (db) =>
        db.all(heldByOthersSql(postgresDialect), now, caller.session),
      );
      assert.equal(held.length, 200);
      assert.ok(held.every((row) => row.claim_session !== caller.session));
    } finally {
      await store.close();
    }
  });

  it("reads an agent's unheld assignments from the owner index by lease, not by fetching every task the agent owns", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    try {
      // A project as the benchmark's: 20,000 tasks, of which eight agents own 60 each, all held
      // by their sessions; of the caller's agent's, one more has no lease and one a lapsed lease.
      // (With few leases among many tasks the planner would read every owned row, as it did.)
      const at = (offset: string) => `to_char((now() + ${offset}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
      await adminQuery(
        `INSERT INTO "${schema}".tasks (id, title, priority, status, owner, claim_session, lease_expires_at, created_at, updated_at)
          SELECT 'tkt-' || lpad(k::text, 6, '0'), 'task ' || k, k % 5, CASE WHEN k <= 480 THEN 'in_progress' ELSE 'open' END,
            CASE WHEN k > 480 THEN NULL WHEN k % 8 = 0 THEN $1 ELSE 'agent-' || k % 8 END,
            CASE WHEN k <= 480 THEN 'ses-' || k END, CASE WHEN k <= 480 THEN ${at("random() * interval '1 hour'")} END,
            ${at("k * interval '1 millisecond'")}, ${at("k * interval '1 millisecond'")}
          FROM generate_series(1, 20000) AS k`,
        [caller.agent],
      );
      const unheld = ["tkt-019999", "tkt-020000"];
      await adminQuery(`UPDATE "${schema}".tasks SET owner = $1, priority = 0 WHERE id = $2`, [
        caller.agent,
        unheld[0],
      ]);
      await adminQuery(
        `UPDATE "${schema}".tasks SET owner = $1, priority = 1, claim_session = 'gone', lease_expires_at = ${at("- interval '1 minute'")}
          WHERE id = $2`,
        [caller.agent, unheld[1]],
      );
      await adminQuery(`ANALYZE "${schema}".tasks`);
      const now = new Date().toISOString();
      const params = [caller.agent, caller.agent, now, 5];
      // As the store runs it: one plan for any parameters, made before their values are known
      // (EXPLAIN of a statement with bound values would plan for those values).
      let n = 0;
      const text = assignedToSql(postgresDialect).replace(/\?/g, () => `$${++n}`);
      const plan = await store.transaction("read", async (db) => {
        await db.run("SET LOCAL plan_cache_mode = force_generic_plan");
        await db.run(`PREPARE assigned_probe AS ${text}`);
        try {
          const values = `'${caller.agent}', '${caller.agent}', '${now}', 5`;
          return (await db.all(`EXPLAIN EXECUTE assigned_probe(${values})`))
            .map((row) => String(row["QUERY PLAN"]))
            .join("\n");
        } finally {
          await db.run("DEALLOCATE assigned_probe");
        }
      });
      // Both ends of the unheld ranges are conditions of the index scans: a filter over the
      // fetched rows would mean reading every task the agent owns, held or not.
      assert.match(
        plan,
        /Index Scan on idx_tasks_owner\s+\(.*\)\s+Index Cond: \([^\n]*lease_expires_at IS NULL\)/,
        plan,
      );
      assert.match(
        plan,
        /Index Scan on idx_tasks_owner\s+\(.*\)\s+Index Cond: \([^\n]*lease_expires_at <= \$3\)/,
        plan,
      );
      assert.doesNotMatch(plan, /Filter: [^\n]*lease_expires_at|Seq Scan on tasks/, plan);
      const assigned = await store.transaction("read", (db) => db.all(assignedToSql(postgresDialect), ...params));
      assert.deepEqual(
        assigned.map((row) => row.id),
        unheld,
      );
    } finally {
      await store.close();
    }
  });

  it("reads a listing's blocked flag per row returned, never by joining every edge to every unfinished task", async () => {
    const schema = fresh();
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
    try {
      const service = new ArbeitService(store, { projectRoot: "/tmp" });
      // Enough tasks, half of them blocked by an unfinished one, for the planner to weigh a hash
      // join of all the edges against a lookup per row.
      await store.write(async () => {
        let previous: string | undefined;
        for (let i = 0; i < 4000; i++) {
          const id = (await service.createTask({ title: `task ${i}`, priority: i % 5 }, caller)).data.task.id;
          if (previous !== undefined && i % 2 === 1)
            await service.relationship(
              { action: "add", from_task_id: previous, to_task_id: id, type: "blocks" },
              caller,
            );
          previous = id;
        }
      });
      await adminQuery(`ANALYZE "${schema}".tasks, "${schema}".relationships`);
      const listing = `SELECT ${taskColumns(postgresDialect)} FROM tasks t
        WHERE t.deleted_at IS NULL AND t.status = 'open' ORDER BY ${TASK_ORDER} LIMIT 20`;
      const plan = (await store.transaction("read", (db) => db.all(`EXPLAIN ${listing}`)))
        .map((row) => String(row["QUERY PLAN"]))
        .join("\n");
      assert.doesNotMatch(plan, /Hashed SubPlan|Hash Join|Seq Scan on relationships/, plan);
      const rows = await store.transaction("read", (db) => db.all(listing));
      assert.equal(rows.length, 20);
      assert.equal(rows.filter((row) => row.blocked === true).length > 0, true, "some listed tasks are blocked");
    } finally {
      await store.close();
    }
  });

  it("replaces a pooled connection the server dropped (a restart) without the caller noticing", async () => {
    const applicationName = `arbeit_drop_${process.pid}`;
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: fresh(), applicationName });
    try {
      const service = new ArbeitService(store, { projectRoot: "/tmp" });
      await service.createTask({ title: "before" }, caller);
      const killed = await adminQuery(
        "SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = $1",
        [applicationName],
      );
      assert.ok(Number(killed.rows[0].n) >= 1);
      const after = await service.createTask({ title: "after" }, caller);
      assert.equal(after.data.task.title, "after");
      assert.equal((await store.read((tx) => tx.listTasks({ limit: 10, offset: 0 }))).length, 2);
    } finally {
      await store.close();
    }
  });

  it("fails a write when a statement sent without waiting for it failed: nothing is kept, and that statement's error is the one reported", async () => {
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: fresh() });
    try {
      const at = "2025-01-01T00:00:00.000Z";
      const insert =
        "INSERT INTO tasks (id, title, status, priority, created_at, updated_at) VALUES (?, ?, ?, 2, ?, ?)";
      const notAStatus = (error: unknown) => /tasks_status_check|check constraint/.test(String(error));
      // The failure comes to light at COMMIT, which then only rolls back.
      await assert.rejects(
        store.transaction("write", async (db) => {
          db.later(insert, "tkt-later001", "sent first", "open", at, at);
          db.later(insert, "tkt-later002", "not a status", "bogus", at, at);
          db.later(insert, "tkt-later003", "sent after", "open", at, at);
        }),
        notAStatus,
      );
      // A statement awaited after it meets the aborted transaction; the cause is still reported.
      await assert.rejects(
        store.transaction("write", async (db) => {
          db.later(insert, "tkt-later004", "not a status", "bogus", at, at);
          await db.get("SELECT 1 AS one");
        }),
        notAStatus,
      );
      const kept = await store.transaction("read", (db) => db.all("SELECT id FROM tasks WHERE id LIKE 'tkt-later%'"));
      assert.deepEqual(kept, []);
      // The connection is usable again, and writes sent without waiting commit.
      await store.transaction("write", async (db) => {
        db.later(insert, "tkt-later005", "kept", "open", at, at);
      });
      const rows = await store.transaction("read", (db) => db.all("SELECT id FROM tasks WHERE id LIKE 'tkt-later%'"));
      assert.deepEqual(rows, [{ id: "tkt-later005" }]);
    } finally {
      await store.close();
    }
  });

  describe("a write whose COMMIT leaves with its final wave (StoreTx.finalWave)", () => {
    const at = "2025-01-01T00:00:00.000Z";
    const insert = "INSERT INTO tasks (id, title, status, priority, created_at, updated_at) VALUES (?, ?, ?, 2, ?, ?)";
    const ids = async (schema: string) =>
      (await adminQuery(`SELECT id FROM "${schema}".tasks WHERE id LIKE 'tkt-wave%' ORDER BY id`)).rows.map(
        (row: { id: string }) => row.id,
      );
    /**
     * `fn` as the one part of a write that says its final wave is issued, with the raw connection:
     * the write's own function issues nothing and says so at once.
     */
    const finalWrite = <T>(store: PostgresTaskStore, fn: (db: SqlDb, finalWave: () => void) => Promise<T>) =>
      store.write((tx) => {
        const part = store.transaction("write", (db) => fn(db, () => tx.finalWave()));
        tx.finalWave();
        return part;
      });

    it("commits before its function returns; a read after the wave runs on the schema, a write after it is refused", async () => {
      const schema = fresh();
      const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
      try {
        const seen = await finalWrite(store, async (db, finalWave) => {
          db.later(insert, "tkt-wave001", "written before the final wave", "open", at, at);
          const read = db.get("SELECT count(*)::int AS n FROM tasks");
          finalWave();
          await read;
          // Run after the COMMIT: when it answers, the COMMIT is done.
          const after = await db.get("SELECT id FROM tasks WHERE id = ?", "tkt-wave001");
          await assert.rejects(db.run(insert, "tkt-wave002", "after the COMMIT", "open", at, at), /final wave/);
          return { after, committed: await ids(schema) };
        });
        assert.deepEqual(seen, { after: { id: "tkt-wave001" }, committed: ["tkt-wave001"] });
        assert.deepEqual(await ids(schema), ["tkt-wave001"]);
        // The connection is clean for the next transaction.
        await store.transaction("write", async (db) => void db.later(insert, "tkt-wave003", "next", "open", at, at));
        assert.deepEqual(await ids(schema), ["tkt-wave001", "tkt-wave003"]);
      } finally {
        await store.close();
      }
    });

    it("commits nothing when a statement of the final wave fails, and reports that statement's error", async () => {
      const schema = fresh();
      const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
      try {
        await assert.rejects(
          finalWrite(store, async (db, finalWave) => {
            db.later(insert, "tkt-wave001", "written before the final wave", "open", at, at);
            const read = db.get("SELECT 1 / (SELECT count(*) FROM tasks WHERE id = 'none')::int AS x");
            finalWave();
            await read;
          }),
          /division by zero/,
        );
        // Caught by the caller, the failure still undoes the write: the COMMIT only rolled back.
        await assert.rejects(
          finalWrite(store, async (db, finalWave) => {
            db.later(insert, "tkt-wave002", "written before the final wave", "open", at, at);
            const read = db.get("SELECT 1 / (SELECT count(*) FROM tasks WHERE id = 'none')::int AS x");
            finalWave();
            return read.catch(() => undefined);
          }),
          /division by zero/,
        );
        assert.deepEqual(await ids(schema), []);
      } finally {
        await store.close();
      }
    });

    it("waits for every part of the transaction: a part still running writes after the others' final wave", async () => {
      const schema = fresh();
      const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
      try {
        await store.write(async (tx) => {
          const done = Promise.all([
            store.transaction("write", async (db) => {
              db.later(insert, "tkt-wave001", "the part that is done first", "open", at, at);
              const read = db.get("SELECT 1 AS one");
              tx.finalWave();
              await read;
            }),
            store.transaction("write", async (db) => {
              await db.get("SELECT 1 AS one");
              await db.get("SELECT 2 AS two");
              db.later(insert, "tkt-wave002", "the part that writes last", "open", at, at);
            }),
          ]);
          tx.finalWave();
          await done;
        });
        assert.deepEqual(await ids(schema), ["tkt-wave001", "tkt-wave002"]);
      } finally {
        await store.close();
      }
    });
  });

  it("refuses to be used after close", async () => {
    const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema: fresh() });
    await store.close();
    await store.close();
    await assert.rejects(
      store.read((tx) => tx.maxEventSeq()),
      /closed/,
    );
  });
});
