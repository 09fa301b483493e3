import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createArbeitHooks } from "../../src/opencode/plugin.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { afterTool, event, systemPrompt } from "../opencode/plugin-driver.js";

/**
 * The OpenCode plugin does not go through a service yet: in a checkout that points at one it does
 * nothing, without a warning per file touched and without making a local store.
 */
describe("the OpenCode plugin in a checkout pointed at arbeit serve", () => {
  it("tracks nothing, adds nothing to the prompt, logs nothing and makes no local store", async () => {
    const { dir, cleanup } = tempDir("arbeit-remote-opencode-");
    try {
      const init = await runCli(["init", "--server", "http://127.0.0.1:9", "--json"], { cwd: dir });
      assert.equal(init.code, 0, init.stdout + init.stderr);
      const logged: unknown[] = [];
      const client = { app: { log: async (entry: unknown) => void logged.push(entry) } };
      const hooks = await createArbeitHooks({ directory: dir, client } as never);
      try {
        writeFileSync(join(dir, "a.ts"), "");
        await afterTool(hooks, "ses_1", "read", { filePath: join(dir, "a.ts") });
        await afterTool(hooks, "ses_1", "edit", { filePath: join(dir, "a.ts") });
        await event(hooks, { type: "file.edited", properties: { file: join(dir, "a.ts") } });
        assert.deepEqual(await systemPrompt(hooks, "ses_1"), []);
        assert.deepEqual(logged, []);
        assert.equal(existsSync(join(dir, ".arbeit", "arbeit.db")), false);
      } finally {
        await hooks.dispose!();
      }
    } finally {
      cleanup();
    }
  });
});

describe("the OpenCode plugin in a process given ARBEIT_URL, in a checkout with a local store", () => {
  it("adds nothing from the local store to the prompt", async () => {
    const { dir, cleanup } = tempDir("arbeit-remote-opencode-");
    const before = process.env.ARBEIT_URL;
    try {
      assert.equal((await runCli(["init", "--json"], { cwd: dir })).code, 0);
      const id = (await runCli(["task", "create", "Only local", "--json"], { cwd: dir })).json.data.task.id;
      assert.equal((await runCli(["task", "start-work", id, "--session", "ses_1", "--json"], { cwd: dir })).code, 0);
      process.env.ARBEIT_URL = "http://127.0.0.1:9";
      const hooks = await createArbeitHooks({ directory: dir } as never);
      try {
        assert.deepEqual(await systemPrompt(hooks, "ses_1"), []);
      } finally {
        await hooks.dispose!();
      }
    } finally {
      if (before === undefined) delete process.env.ARBEIT_URL;
      else process.env.ARBEIT_URL = before;
      cleanup();
    }
  });
});
