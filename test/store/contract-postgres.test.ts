import { after, describe } from "node:test";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import { dropSchema, migratedSchema, postgresSkip, TEST_DATABASE_URL } from "../helpers/postgres.js";
import { TestClock } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";
import { storeContract } from "./contract/index.js";

const runtime = typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? "node" : "bun";

// Skips (saying why) when Postgres is unreachable on a developer's machine; fails under CI.
const skip = await postgresSkip();

describe(`store contract: Postgres under ${runtime}`, { skip, concurrency: 4 }, () => {
  // Every test gets a fresh schema of its own, dropped afterwards (in the background: DDL is slow).
  const drops: Array<Promise<unknown>> = [];
  after(async () => {
    const failed = (await Promise.all(drops)).find((result) => result instanceof Error);
    if (failed) throw failed;
  });
  storeContract(
    async () => {
      const schema = await migratedSchema();
      const clock = new TestClock();
      const store = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema, clock: clock.now });
      const { dir, cleanup } = tempDir();
      return {
        store,
        clock,
        root: dir,
        service: new ArbeitService(store, { projectRoot: dir, now: clock.now }),
        openPeer: () => PostgresTaskStore.open(TEST_DATABASE_URL, { schema, maxConnections: 2, clock: clock.now }),
        async close() {
          await store.close();
          drops.push(dropSchema(schema).catch((error: unknown) => error));
          cleanup();
        },
      };
    },
    { concurrentPeers: true },
  );
});
