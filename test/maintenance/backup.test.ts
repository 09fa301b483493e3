import assert from "node:assert/strict";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runDoctor } from "../../src/maintenance/doctor.js";
import { openDriver } from "../../src/store/sqlite/open-driver.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { startWriter, type Writer } from "../crash/writer.js";
import { runCli } from "../helpers/cli.js";
import { hostBinary } from "../helpers/hosts.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";

/** Bun for the test that runs the backup under it (installed on demand; says why when it cannot be). */
const noBun = () => requirement("Bun, for the backup under Bun", hostBinary("bun").missing);

/**
 * Waits until the writer has acknowledged `count` writes. It fails at once if the writer ends
 * first, and after a bound far beyond any sane run if it stops writing without ending: a broken
 * writer must fail this test, never hang it. The bound says nothing about speed.
 */
async function waitForAcks(writer: Writer, count: number, boundMs = 120_000): Promise<void> {
  let ended = false;
  void writer.exited.then(() => (ended = true));
  const deadline = Date.now() + boundMs;
  while (writer.acks.length < count) {
    const tail = writer.acks.slice(-5).join("\n");
    if (ended) assert.fail(`the writer ended after ${writer.acks.length} of ${count} writes:\n${tail}`);
    if (Date.now() > deadline)
      assert.fail(`the writer stopped at ${writer.acks.length} of ${count} writes for ${boundMs / 1000} s:\n${tail}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** arbeit backup: a consistent copy taken while other processes keep writing. */
describe("arbeit backup while another process writes in a loop", () => {
  it("every backup opens, passes integrity_check and doctor, and holds a growing snapshot", async () => {
    const { dir, cleanup } = tempDir();
    assert.equal((await runCli(["init"], { cwd: dir })).code, 0);
    const writer = startWriter(dir, "busy-writer");
    await writer.ready;
    const counts: number[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        await waitForAcks(writer, (i + 1) * 10);
        const file = join(dir, `backup-${i}.db`);
        const result = await runCli(["backup", file], { cwd: dir });
        assert.equal(result.code, 0, result.stdout + result.stderr);
        assert.equal(result.json.data.integrity, "ok");
        assert.equal(result.json.data.path, file);

        const copy = await openDriver(file);
        assert.deepEqual(copy.prepare("PRAGMA integrity_check").all(), [{ integrity_check: "ok" }]);
        assert.equal(copy.prepare("PRAGMA journal_mode").get<{ journal_mode: string }>()!.journal_mode, "delete");
        counts.push(copy.prepare("SELECT COUNT(*) AS n FROM tasks").get<{ n: number }>()!.n);
        copy.close();
        // A snapshot: every row agrees with the events, even though the writer never paused.
        const store = await SqliteTaskStore.open(file);
        const report = await runDoctor(store);
        await store.close();
        assert.equal(report.ok, true, JSON.stringify(report.checks.filter((c) => !c.ok)));
      }
    } finally {
      writer.child.kill("SIGKILL");
      await writer.exited;
    }
    assert.ok(counts[0]! > 0);
    for (let i = 1; i < counts.length; i++) assert.ok(counts[i]! >= counts[i - 1]!, `counts ${counts}`);
    assert.ok(
      !writer.acks.some((line) => line.startsWith("error") || line.startsWith("crashed")),
      writer.acks.join("\n"),
    );
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.includes(".partial")),
      [],
      "no partial files left",
    );
    cleanup();
  });
});

describe("arbeit backup refuses what it should", () => {
  it("never overwrites an existing file, and needs an existing folder", async () => {
    const { dir, cleanup } = tempDir();
    await runCli(["init"], { cwd: dir });
    writeFileSync(join(dir, "taken.db"), "precious");
    const taken = await runCli(["backup", "taken.db"], { cwd: dir });
    assert.equal(taken.code, 1);
    assert.match(taken.json.error.message, /already exists/);
    const nowhere = await runCli(["backup", "no/such/folder/b.db"], { cwd: dir });
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.json.error.message, /does not exist/);
    const missing = await runCli(["backup"], { cwd: dir });
    assert.equal(missing.code, 2);
    assert.ok(!existsSync(join(dir, "no")));
    cleanup();
  });

  it("works under Bun too (VACUUM INTO behind the same driver interface)", { skip: noBun() }, async () => {
    const { dir, cleanup } = tempDir();
    const script = `
      const { SqliteTaskStore } = await import(${JSON.stringify(new URL("../../src/store/sqlite/sqlite-task-store.ts", import.meta.url).pathname)});
      const store = await SqliteTaskStore.open(process.argv.at(-1) + "/a.db");
      await store.write(async (tx) => tx.insertTask({ list_id: "default", title: "bun", type: null, status: "open",
        intent: null, description: null, plan: null, priority: 2, owner: null, active_form: null, created_at: new Date().toISOString() }));
      await store.backup(process.argv.at(-1) + "/b.db");
      await store.close();
      console.log(store.driver.runtime);
    `;
    const bun = hostBinary("bun").path;
    const { spawnSync } = await import("node:child_process");
    const result = spawnSync(bun, ["-e", script, dir], { encoding: "utf8" });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), "bun");
    const copy = await openDriver(join(dir, "b.db"));
    assert.deepEqual(copy.prepare("PRAGMA integrity_check").all(), [{ integrity_check: "ok" }]);
    assert.equal(copy.prepare("SELECT title FROM tasks").get<{ title: string }>()!.title, "bun");
    copy.close();
    cleanup();
  });
});
