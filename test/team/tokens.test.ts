import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { PostgresTaskStore } from "../../src/store/postgres/postgres-task-store.js";
import type { SqlStore } from "../../src/store/sql/database.js";
import { SqliteTaskStore } from "../../src/store/sqlite/sqlite-task-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { tokenState } from "../../src/team/token-rules.js";
import { activeToken, assertActiveToken, createToken, revokeTokens } from "../../src/team/tokens.js";
import { dropSchema, postgresSkip, TEST_DATABASE_URL, uniqueSchema } from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp.js";

const EXPIRY = "2030-01-01T00:00:00.000Z";
const BEFORE = "2029-12-31T23:59:59.999Z";
const AFTER = "2030-01-01T00:00:00.001Z";

for (const engine of ["sqlite", "postgres"] as const) {
  describe(`a token's check in a transaction on ${engine}`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let store: TaskStore & SqlStore;
    let done: () => Promise<void>;
    before(async () => {
      if (engine === "sqlite") {
        const { dir, cleanup } = tempDir();
        const opened = await SqliteTaskStore.open(join(dir, "arbeit.db"));
        store = opened;
        done = async () => {
          await opened.close();
          cleanup();
        };
      } else {
        const schema = uniqueSchema("arbeit_tokens");
        const opened = await PostgresTaskStore.open(TEST_DATABASE_URL, { schema });
        store = opened;
        done = async () => {
          await opened.close();
          await dropSchema(schema);
        };
      }
    });
    after(() => done?.());

    it("the asserting statement says a token is active exactly when tokenState does: up to its expiry, not at it, never once revoked", async () => {
      const { token, secret } = await createToken(store, {
        kind: "agent",
        name: "expiring",
        read_only: false,
        expires_at: EXPIRY,
      });
      const agree = async (now: string) => {
        const state = tokenState(token, now);
        assert.equal((await activeToken(store, secret, now)) !== undefined, state === "active");
        assert.equal(await assertActiveToken(store, secret, now), state === "active", `at ${now} it is ${state}`);
      };
      for (const now of [BEFORE, EXPIRY, AFTER]) await agree(now);
      const [revoked] = await revokeTokens(store, "expiring");
      assert.equal(tokenState(revoked!, BEFORE), "revoked");
      assert.equal(await assertActiveToken(store, secret, BEFORE), false);
      assert.equal(await assertActiveToken(store, "arb_no-such-secret", BEFORE), false);
    });
  });
}
