import assert from "node:assert/strict";
import { chmodSync, mkdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { adminQuery, dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";
import { cliInMount, cliUnderFilePermissions, filePermissionsSkip, mountSkip } from "./sandbox.js";

/**
 * Stores in odd states: read-only, unreadable, full, damaged, empty. Each is a documented error
 * naming the store and what to do (never INTERNAL_ERROR's "this is a bug in Arbeit"), reads work
 * wherever the data can be read, and nothing is left half-made.
 */

/** A project with two tasks, made through the real CLI. */
async function seededProject(): Promise<{ dir: string; cleanup: () => void }> {
  const { dir, cleanup } = tempDir("arbeit-store-");
  assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
  for (const title of ["first", "second"]) {
    assert.equal((await runCli(["task", "create", "--title", title, "--json"], { cwd: dir })).code, 0);
  }
  return { dir, cleanup };
}

const errorCode = (result: { json: any }) => result.json?.error?.code;

describe("a store on a read-only file system", { skip: mountSkip() }, () => {
  it("can be read (query, get, resume, doctor), and a write is STORE_READ_ONLY naming the file", async () => {
    const { dir, cleanup } = await seededProject();
    const mount = join(dir, "..", `${dir.split("/").at(-1)}-ro`);
    mkdirSync(mount);
    try {
      const { results, listing } = cliInMount(mount, { size: "8m", seed: dir, readOnly: true }, [
        ["query", "tasks", "--json"],
        ["resume", "--json"],
        ["doctor", "--json"],
        ["task", "create", "--title", "third", "--json"],
      ]);
      const [tasks, resume, doctor, create] = results;
      assert.equal(tasks!.code, 0, tasks!.stdout + tasks!.stderr);
      assert.deepEqual(tasks!.json.data.tasks.map((task: any) => task.title).sort(), ["first", "second"]);
      assert.equal(resume!.code, 0, resume!.stdout);
      // A briefing from a store that cannot record the look: the cursor stays where it was.
      assert.equal(resume!.json.data.cursor.advanced, false);
      assert.equal(doctor!.code, 0, doctor!.stdout);
      assert.equal(doctor!.json.ok, true);
      assert.equal(create!.code, 1);
      assert.equal(errorCode(create!), "STORE_READ_ONLY", create!.stdout);
      assert.match(create!.json.error.message, /read-only file system/);
      assert.match(create!.json.error.message, /\.arbeit\/arbeit\.db/);
      assert.doesNotMatch(create!.stdout, /bug in Arbeit/);
      // Nothing beside what init made was created either (no -wal, no -shm).
      assert.deepEqual(listing.split("\n"), ["./.arbeit", "./.arbeit/.gitignore", "./.arbeit/arbeit.db"]);
    } finally {
      cleanup();
    }
  });
});

describe("a full disk", { skip: mountSkip() }, () => {
  it("fails init with STORE_UNAVAILABLE and leaves no database or .arbeit/ behind", () => {
    const { dir, cleanup } = tempDir("arbeit-full-");
    try {
      const { results, listing } = cliInMount(dir, { size: "64k" }, [["init", "--json"]]);
      assert.equal(results[0]!.code, 1, results[0]!.stdout);
      assert.equal(errorCode(results[0]!), "STORE_UNAVAILABLE", results[0]!.stdout);
      assert.match(results[0]!.json.error.message, /arbeit\.db/);
      assert.doesNotMatch(results[0]!.stdout, /bug in Arbeit/);
      assert.equal(listing, "", "a failed init leaves nothing");
    } finally {
      cleanup();
    }
  });

  it("fails a write with STORE_UNAVAILABLE and writes nothing of it", () => {
    const { dir, cleanup } = tempDir("arbeit-full-");
    const big = JSON.stringify({ title: "too much", description: "x".repeat(30_000) });
    try {
      const { results } = cliInMount(dir, { size: "2m" }, [
        ["init", "--json"],
        ["task", "create", "--title", "kept", "--json"],
        // Every byte left goes to a filler file: the next write has nowhere to go.
        { shell: "dd if=/dev/zero of=filler bs=4k 2>/dev/null; true" },
        ["call", "arbeit_task_create", big],
        // Space again: what is there is exactly what was acknowledged.
        { shell: "rm filler" },
        ["query", "tasks", "--json"],
      ]);
      const [init, kept, full, tasks] = results;
      assert.equal(init!.code, 0, init!.stdout);
      assert.equal(kept!.code, 0, kept!.stdout);
      assert.equal(full!.code, 1, full!.stdout);
      assert.equal(errorCode(full!), "STORE_UNAVAILABLE", full!.stdout);
      assert.match(full!.json.error.message, /arbeit\.db/);
      assert.doesNotMatch(full!.stdout, /bug in Arbeit/);
      assert.equal(tasks!.code, 0, tasks!.stdout + tasks!.stderr);
      assert.deepEqual(
        tasks!.json.data.tasks.map((task: any) => task.title),
        ["kept"],
      );
    } finally {
      cleanup();
    }
  });
});

describe("a store the user may not write, or not read", { skip: filePermissionsSkip() }, () => {
  it("is read as usual and refuses writes with STORE_READ_ONLY when only readable", async () => {
    const { dir, cleanup } = await seededProject();
    try {
      for (const path of [dir, join(dir, ".arbeit")]) chmodSync(path, 0o555);
      chmodSync(join(dir, ".arbeit", "arbeit.db"), 0o444);
      const tasks = cliUnderFilePermissions(dir, ["query", "tasks", "--json"]);
      assert.equal(tasks.code, 0, tasks.stdout + tasks.stderr);
      assert.equal(tasks.json.data.tasks.length, 2);
      const create = cliUnderFilePermissions(dir, ["task", "create", "--title", "third", "--json"]);
      assert.equal(errorCode(create), "STORE_READ_ONLY", create.stdout);
      assert.match(create.json.error.message, /no permission to write/);
    } finally {
      for (const path of [dir, join(dir, ".arbeit")]) chmodSync(path, 0o755);
      cleanup();
    }
  });

  it("is STORE_UNAVAILABLE naming the file when it cannot be read at all", async () => {
    const { dir, cleanup } = await seededProject();
    try {
      chmodSync(join(dir, ".arbeit", "arbeit.db"), 0o000);
      const tasks = cliUnderFilePermissions(dir, ["query", "tasks", "--json"]);
      assert.equal(tasks.code, 1);
      assert.equal(errorCode(tasks), "STORE_UNAVAILABLE", tasks.stdout);
      assert.equal(tasks.json.error.details.path, join(dir, ".arbeit", "arbeit.db"));
      assert.doesNotMatch(tasks.stdout, /bug in Arbeit/);
    } finally {
      cleanup();
    }
  });
});

describe("a damaged store", () => {
  it("truncated: every command, doctor included, is STORE_DAMAGED naming the file and what to do", async () => {
    const { dir, cleanup } = await seededProject();
    try {
      const db = join(dir, ".arbeit", "arbeit.db");
      truncateSync(db, Math.floor(statSync(db).size / 2));
      for (const args of [
        ["doctor", "--json"],
        ["query", "tasks", "--json"],
        ["task", "create", "--title", "x", "--json"],
      ]) {
        const result = await runCli(args, { cwd: dir });
        assert.equal(result.code, 1, `${args[0]}: ${result.stdout}`);
        assert.equal(errorCode(result), "STORE_DAMAGED", `${args[0]}: ${result.stdout}`);
        assert.equal(result.json.error.details.path, db);
        assert.match(result.json.error.suggestions.join(" "), /backup/);
      }
    } finally {
      cleanup();
    }
  });

  it("0 bytes: refused as STORE_DAMAGED, never taken for a new empty store", async () => {
    const { dir, cleanup } = await seededProject();
    try {
      const db = join(dir, ".arbeit", "arbeit.db");
      writeFileSync(db, "");
      for (const args of [
        ["query", "tasks", "--json"],
        ["task", "create", "--title", "x", "--json"],
        ["doctor", "--json"],
      ]) {
        const result = await runCli(args, { cwd: dir });
        assert.equal(errorCode(result), "STORE_DAMAGED", `${args[0]}: ${result.stdout}`);
        assert.match(result.json.error.message, /0 bytes/);
      }
      assert.equal(statSync(db).size, 0, "the file is left as it was, for whoever recovers it");
    } finally {
      cleanup();
    }
  });

  it("not a database at all: STORE_DAMAGED", async () => {
    const { dir, cleanup } = await seededProject();
    try {
      writeFileSync(join(dir, ".arbeit", "arbeit.db"), "these are my notes, not a database\n");
      const result = await runCli(["query", "tasks", "--json"], { cwd: dir });
      assert.equal(errorCode(result), "STORE_DAMAGED", result.stdout);
    } finally {
      cleanup();
    }
  });
});

describe("a Postgres store that cannot be written or reached", { skip: await postgresSkip() }, () => {
  it("read-only (a role whose transactions are read-only, as on a standby): reads work, writes are STORE_READ_ONLY", async () => {
    const schema = uniqueSchema("arbeit_ro");
    const role = `${schema}_reader`;
    const { dir, cleanup } = tempDir("arbeit-pg-ro-");
    try {
      const env = { ARBEIT_DATABASE_URL: TEST_DATABASE_URL, ARBEIT_DATABASE_SCHEMA: schema };
      assert.equal((await runCli(["init", "--json"], { cwd: dir, env })).code, 0);
      assert.equal((await runCli(["task", "create", "--title", "shared", "--json"], { cwd: dir, env })).code, 0);
      await adminQuery(`CREATE ROLE "${role}" LOGIN`);
      await adminQuery(`ALTER ROLE "${role}" SET default_transaction_read_only = on`);
      await adminQuery(`GRANT USAGE ON SCHEMA "${schema}" TO "${role}"`);
      await adminQuery(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "${schema}" TO "${role}"`);
      const url = new URL(TEST_DATABASE_URL);
      url.username = role;
      const reader = { ARBEIT_DATABASE_URL: url.toString(), ARBEIT_DATABASE_SCHEMA: schema };
      const tasks = await runCli(["query", "tasks", "--json"], { cwd: dir, env: reader });
      assert.equal(tasks.code, 0, tasks.stdout + tasks.stderr);
      assert.deepEqual(
        tasks.json.data.tasks.map((task: any) => task.title),
        ["shared"],
      );
      const create = await runCli(["task", "create", "--title", "x", "--json"], { cwd: dir, env: reader });
      assert.equal(errorCode(create), "STORE_READ_ONLY", create.stdout);
      assert.doesNotMatch(create.stdout, /bug in Arbeit/);
    } finally {
      await dropSchema(schema);
      await adminQuery(`DROP ROLE IF EXISTS "${role}"`);
      cleanup();
    }
  });

  it("unreachable: STORE_UNAVAILABLE naming the server, with what to check", async () => {
    const { dir, cleanup } = tempDir("arbeit-pg-down-");
    try {
      mkdirSync(join(dir, ".arbeit"));
      // Port 1 on loopback: nothing listens there, so the connection is refused at once.
      const env = { ARBEIT_DATABASE_URL: "postgres://postgres@127.0.0.1:1/test" };
      const result = await runCli(["query", "tasks", "--json"], { cwd: dir, env });
      assert.equal(result.code, 1);
      assert.equal(errorCode(result), "STORE_UNAVAILABLE", result.stdout);
      assert.match(result.json.error.message, /127\.0\.0\.1:1/);
      assert.match(result.json.error.suggestions.join(" "), /ARBEIT_DATABASE_URL/);
    } finally {
      cleanup();
    }
  });
});
