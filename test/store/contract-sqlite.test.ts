import { join } from "node:path";
import { describe } from "node:test";
import { ArbeitService } from "../../src/service/arbeit-service.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import { TestClock } from "../helpers/service.js";
import { tempDir } from "../helpers/temp.js";
import { storeContract } from "./contract/index.js";

const runtime = typeof (globalThis as { Bun?: unknown }).Bun === "undefined" ? "node" : "bun";

// scripts/test.mjs runs this file under Node (better-sqlite3) and under Bun (bun:sqlite).
describe(`store contract: SQLite under ${runtime}`, () => {
  storeContract(
    async () => {
      const { dir, cleanup } = tempDir();
      const path = join(dir, "arbeit.db");
      const clock = new TestClock();
      const store = await SqliteTaskStore.open(path, { clock: clock.now });
      return {
        store,
        clock,
        root: dir,
        service: new ArbeitService(store, { projectRoot: dir, now: clock.now }),
        openPeer: () => SqliteTaskStore.open(path, { clock: clock.now }),
        async close() {
          await store.close();
          cleanup();
        },
      };
    },
    { concurrentPeers: true },
  );
});
