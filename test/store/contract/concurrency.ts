import assert from "node:assert/strict";
import { it } from "node:test";
import { ArbeitService } from "../../../src/service/arbeit-service.js";
import type { TaskStore } from "../../../src/store/task-store.js";
import {
  type ContractOptions,
  type ContractProject,
  contractProject,
  type StoreFactory,
  suite,
  useStore,
} from "./harness.js";

const CALLERS = 8;
const TASKS = 100;

/**
 * CALLERS projects on the same data: independent peers (connections / pools) where the store
 * supports concurrent writers in one process, else CALLERS async callers sharing the one store.
 */
async function handles(
  p: ContractProject,
  peers: boolean,
): Promise<{ projects: ContractProject[]; close(): Promise<void> }> {
  if (!peers) return { projects: Array.from({ length: CALLERS }, () => p), close: async () => {} };
  const stores: TaskStore[] = [];
  for (let i = 0; i < CALLERS; i++) stores.push(await p.openPeer());
  const projects = stores.map((store) =>
    contractProject(p, new ArbeitService(store, { projectRoot: p.root, now: p.clock.now })),
  );
  return { projects, close: async () => void (await Promise.all(stores.map((store) => store.close()))) };
}

async function claimEverything(p: ContractProject, peers: boolean): Promise<void> {
  await p.store.write(async () => {
    for (let i = 0; i < TASKS; i++)
      await p.service.createTask({ title: `job ${i}`, priority: i % 5 }, { session: null, agent: "setup" });
  });
  const { projects, close } = await handles(p, peers);
  try {
    const claimed = await Promise.all(
      projects.map(async (project, i) => {
        const agent = `agent-${i}`;
        const mine: string[] = [];
        for (;;) {
          const result = await project.call("arbeit_task_claim", { next: true }, { agent, session: `ses-${i}` });
          assert.equal(result.success, true, JSON.stringify(result));
          if (!result.data.claimed) return mine;
          assert.equal(result.data.task.owner, agent);
          mine.push(result.data.task.id);
        }
      }),
    );
    const all = claimed.flat();
    assert.equal(all.length, TASKS, "every task claimed");
    assert.equal(new Set(all).size, TASKS, "no task claimed twice");
    const events = await p.ok("arbeit_query", {
      query: "events",
      params: { event_types: ["task_claimed"], limit: 1000 },
    });
    assert.equal(events.events.length, TASKS);
    const owners = await p.read((tx) => tx.listTasks({ limit: 1000, offset: 0 }));
    for (const [i, mine] of claimed.entries())
      for (const id of mine) assert.equal(owners.find((t) => t.id === id)?.owner, `agent-${i}`);
  } finally {
    await close();
  }
}

/** Many callers at once: every invariant the service checks must hold as if they ran one by one. */
export function concurrencyContract(factory: StoreFactory, options: ContractOptions): void {
  suite(
    "concurrency",
    () => {
      const p = useStore(factory);
      const peers = options.concurrentPeers;
      const by = peers ? "separate connections" : "async callers on one store";

      it(`${CALLERS} parallel callers on one store claim ${TASKS} tasks, each exactly once`, async () => {
        await claimEverything(p(), false);
      });

      it(`${CALLERS} separate connections claim ${TASKS} tasks, each exactly once`, {
        skip: peers ? false : "this store's peers cannot write concurrently in one process (see harness.ts)",
      }, async () => {
        await claimEverything(p(), true);
      });

      it(`never lets two opposite blocks edges both in (${by})`, async () => {
        const { projects, close } = await handles(p(), peers);
        try {
          for (let round = 0; round < 10; round++) {
            const a = await p().task(`a${round}`);
            const b = await p().task(`b${round}`);
            const results = await Promise.all(
              projects.map((project, i) =>
                project.call("arbeit_relationship", {
                  action: "add",
                  from_task_id: i % 2 === 0 ? a : b,
                  to_task_id: i % 2 === 0 ? b : a,
                  type: "blocks",
                }),
              ),
            );
            const codes = results.map((r) => (r.success ? "ok" : r.error.code));
            assert.equal(codes.filter((c) => c === "ok").length, 1, codes.join(","));
            assert.ok(
              codes.every((c) => ["ok", "CIRCULAR_DEPENDENCY", "RELATIONSHIP_EXISTS"].includes(c)),
              codes.join(","),
            );
            const reach = await p().read(
              async (tx) => (await tx.reaches(a, b, "blocks")) && (await tx.reaches(b, a, "blocks")),
            );
            assert.equal(reach, false);
          }
        } finally {
          await close();
        }
      });

      it(`lets exactly one of many updates with the same expected_version win (${by})`, async () => {
        const id = await p().task("contended");
        const { projects, close } = await handles(p(), peers);
        try {
          const results = await Promise.all(
            projects.map((project, i) =>
              project.call("arbeit_task_update", { task_id: id, title: `by ${i}`, expected_version: 1 }),
            ),
          );
          const winners = results.filter((r) => r.success);
          assert.equal(winners.length, 1);
          for (const r of results.filter((r) => !r.success)) assert.equal(r.error?.code, "VERSION_CONFLICT");
          assert.equal((await p().ok("arbeit_task_get", { task_id: id })).task.version, 2);
        } finally {
          await close();
        }
      });

      it(`gives one parent only, whoever attaches at the same moment (${by})`, async () => {
        const child = await p().task("child");
        const parents: string[] = [];
        for (let i = 0; i < CALLERS; i++) parents.push(await p().task(`parent ${i}`));
        const { projects, close } = await handles(p(), peers);
        try {
          const results = await Promise.all(
            projects.map((project, i) =>
              project.call("arbeit_relationship", {
                action: "add",
                from_task_id: parents[i],
                to_task_id: child,
                type: "parent_of",
              }),
            ),
          );
          assert.equal(results.filter((r) => r.success).length, 1);
        } finally {
          await close();
        }
      });

      it(`orders events so that a cursor reader polling during writes misses none (${by})`, async () => {
        const { projects, close } = await handles(p(), peers);
        let writing = true;
        const seen: number[] = [];
        const reader = (async () => {
          let after = 0;
          for (;;) {
            const done = !writing;
            const page = await p().ok("arbeit_query", { query: "events", params: { after_seq: after, limit: 50 } });
            for (const event of page.events) seen.push(event.seq);
            after = page.next_after_seq;
            if (done && !page.has_more) return;
          }
        })();
        try {
          await Promise.all(
            projects.map(async (project, i) => {
              for (let n = 0; n < 10; n++)
                await project.ok("arbeit_task_create", { title: `w${i}-${n}` }, { agent: `w${i}` });
            }),
          );
        } finally {
          writing = false;
          await reader;
          await close();
        }
        const all = (await p().ok("arbeit_query", { query: "events", params: { limit: 1000 } })).events;
        assert.equal(all.length, CALLERS * 10);
        assert.deepEqual(
          seen,
          all.map((e: { seq: number }) => e.seq),
        );
      });
    },
    { timeout: 120_000 },
  );
}
