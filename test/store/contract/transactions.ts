import assert from "node:assert/strict";
import { it } from "node:test";
import type { NewTask, StoreTx } from "../../../src/store/task-store.js";
import { ids, type StoreFactory, suite, useStore } from "./harness.js";

const row = (title: string): NewTask => ({
  list_id: "default",
  title,
  type: null,
  status: "open",
  intent: null,
  description: null,
  plan: null,
  priority: 2,
  risk: null,
  impact: null,
  owner: null,
  active_form: null,
  metadata: null,
  created_at: "2026-01-01T00:00:00.000Z",
});

const titles = (tx: StoreTx) => tx.listTasks({ limit: 100, offset: 0 }).then((tasks) => tasks.map((t) => t.title));

/** The TaskStore transaction contract: atomic writes, nesting, snapshots. */
export function transactionContract(factory: StoreFactory): void {
  suite("transactions", () => {
    const p = useStore(factory);

    it("rolls back a failed write completely", async () => {
      await assert.rejects(
        p().store.write(async (tx) => {
          await tx.insertTask(row("doomed"));
          throw new Error("boom");
        }),
        /boom/,
      );
      assert.deepEqual(await p().read(titles), []);
    });

    it("joins a nested write to the open one, so both commit or neither does", async () => {
      const store = p().store;
      await assert.rejects(
        store.write(async (tx) => {
          await tx.insertTask(row("outer"));
          await store.write(async (inner) => {
            assert.deepEqual(await titles(inner), ["outer"], "the inner write sees the outer one's rows");
            await inner.insertTask(row("inner"));
          });
          assert.deepEqual((await store.read(titles)).sort(), ["inner", "outer"], "a read inside a write joins it");
          throw new Error("after both");
        }),
        /after both/,
      );
      assert.deepEqual(await p().read(titles), []);
      await store.write(async (tx) => {
        await tx.insertTask(row("outer"));
        await store.write((inner) => inner.insertTask(row("inner")));
      });
      assert.deepEqual((await p().read(titles)).sort(), ["inner", "outer"]);
    });

    it("refuses to start a write inside a read", async () => {
      const store = p().store;
      await assert.rejects(store.read(() => store.write((tx) => tx.insertTask(row("x")))));
      assert.deepEqual(await p().read(titles), []);
    });

    it("reads one snapshot while another connection commits", async () => {
      await p().store.write((tx) => tx.insertTask(row("before")));
      const peer = await p().openPeer();
      try {
        const seen = await p().store.read(async (tx) => {
          const first = await titles(tx);
          await peer.write((other) => other.insertTask(row("during")));
          return [first, await titles(tx)];
        });
        assert.deepEqual(seen, [["before"], ["before"]]);
        assert.deepEqual((await p().read(titles)).sort(), ["before", "during"]);
      } finally {
        await peer.close();
      }
    });

    it("leaves nothing half-written when a tool call fails midway", async () => {
      const a = await p().task("a");
      const b = await p().task("b", { blocked_by: [a] });
      const c = await p().task("c");
      const seq = await p().lastSeq();
      // c is added first (allowed), then b would close a cycle: the whole update must vanish.
      const error = await p().fail("arbeit_task_update", { task_id: a, title: "renamed", blocked_by: [c, b] });
      assert.equal(error.code, "CIRCULAR_DEPENDENCY");
      const task = (await p().ok("arbeit_task_get", { task_id: a })).task;
      assert.deepEqual([task.title, task.blocked_by, task.version], ["a", [], 1]);
      assert.equal(await p().lastSeq(), seq);
      assert.deepEqual(ids(await p().read((tx) => tx.blocking(c))), []);
    });

    it("hands out a fresh id for every insert", async () => {
      const made = await p().store.write(async (tx) => {
        const out: string[] = [];
        for (let i = 0; i < 50; i++) out.push(await tx.insertTask(row(`t${i}`)));
        return out;
      });
      assert.equal(new Set(made).size, 50);
      assert.equal((await p().read((tx) => tx.getTasks(made))).length, 50);
    });
  });
}
