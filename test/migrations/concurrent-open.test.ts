import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { SqlDriver } from "../../src/store/sqlite/driver.js";
import { applyMigrations, listMigrations, schemaVersion } from "../../src/store/sqlite/migrate.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { tempDir } from "../helpers/temp.js";
import { schemaOf } from "./support.js";

/**
 * Several processes opening the same fresh database at once migrate it exactly once: had two of
 * them run a migration, the second would fail on `CREATE TABLE` of an existing table.
 *
 * "At once" is made to happen, not hoped for. Each process loads the store, says "ready" and
 * waits for "go"; it then says "opening" and opens. Meanwhile the test holds an exclusive lock
 * on the (empty) database file, so no open can get past its first read until every process has
 * said "opening"; only then is the lock let go, and all of them race for the first migration.
 */
const STORE = fileURLToPath(new URL("../../dist/store/sqlite/sqlite-task-store.js", import.meta.url));
const OPENER = `
const { SqliteTaskStore } = await import(process.argv[1]);
process.stdout.write("ready\\n");
await new Promise((resolve) => process.stdin.once("data", resolve));
process.stdin.destroy();
process.stdout.write("opening\\n");
const store = await SqliteTaskStore.open(process.argv[2]);
await store.close();
process.stdout.write("opened\\n");
`;

class Opener {
  readonly #child: ChildProcessWithoutNullStreams;
  #out = "";
  readonly exited: Promise<number>;

  constructor(path: string) {
    this.#child = spawn(process.execPath, ["--input-type=module", "-e", OPENER, STORE, path]);
    this.#child.stdout.on("data", (chunk) => (this.#out += chunk));
    this.#child.stderr.on("data", (chunk) => (this.#out += chunk));
    this.exited = new Promise((resolve) => this.#child.on("close", (code) => resolve(code ?? 1)));
  }

  get output(): string {
    return this.#out;
  }

  said(word: string): boolean {
    return this.#out.split("\n").includes(word);
  }

  /** Resolves once the process has said `word`; fails the test if it ends without saying it. */
  async waitToSay(word: string): Promise<void> {
    let ended = false;
    void this.exited.then(() => (ended = true));
    while (!this.said(word)) {
      if (ended) assert.fail(`an opener ended before saying ${JSON.stringify(word)}: ${this.#out}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  go(): void {
    this.#child.stdin.end("go\n");
  }
}

/** An exclusive lock on `path`: nobody else can read or write the database until it is released. */
async function holdLock(path: string): Promise<SqlDriver> {
  const holder = await openDriver(path);
  holder.exec("BEGIN EXCLUSIVE");
  return holder;
}

describe("two or more processes opening a fresh database at once", { timeout: 180_000 }, () => {
  it("migrate it exactly once (6 processes, 3 rounds)", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const reference = await openDriver(join(dir, "reference.db"));
      applyMigrations(reference);
      const expected = schemaOf(reference);
      reference.close();
      for (let round = 0; round < 3; round++) {
        const path = join(dir, `fresh-${round}.db`);
        const holder = await holdLock(path);
        const openers = Array.from({ length: 6 }, () => new Opener(path));
        await Promise.all(openers.map((opener) => opener.waitToSay("ready")));
        for (const opener of openers) opener.go();
        await Promise.all(openers.map((opener) => opener.waitToSay("opening")));
        // The overlap itself: every process is inside open, and none has got through it.
        assert.deepEqual(
          openers.map((opener) => opener.said("opened")),
          openers.map(() => false),
          "an open finished while the lock was held",
        );
        holder.exec("ROLLBACK");
        holder.close();
        const codes = await Promise.all(openers.map((opener) => opener.exited));
        codes.forEach((code, i) => {
          assert.equal(code, 0, openers[i]!.output);
          assert.ok(openers[i]!.said("opened"), openers[i]!.output);
        });
        const driver = await openDriver(path);
        assert.equal(schemaVersion(driver), listMigrations().length);
        assert.deepEqual(schemaOf(driver), expected);
        driver.close();
      }
    } finally {
      cleanup();
    }
  });

  it("an open behind a lock held longer than the busy timeout (5 s) waits for it, then migrates", async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, "held.db");
      const holder = await holdLock(path);
      const opener = new Opener(path);
      await opener.waitToSay("ready");
      opener.go();
      await opener.waitToSay("opening");
      // Past SQLite's busy timeout: a single wait of the busy handler gives up before this.
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      assert.equal(opener.said("opened"), false, opener.output);
      holder.exec("ROLLBACK");
      holder.close();
      assert.equal(await opener.exited, 0, opener.output);
      assert.ok(opener.said("opened"), opener.output);
      const driver = await openDriver(path);
      assert.equal(schemaVersion(driver), listMigrations().length);
      driver.close();
    } finally {
      cleanup();
    }
  });
});
