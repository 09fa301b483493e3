import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import { openProject } from "../../src/service/project.js";
import { findTool, TOOL_NAMES } from "../../src/tools/catalogue.js";
import type { ToolContext } from "../../src/tools/define.js";
import { type Envelope, invokeTool } from "../../src/tools/envelope.js";
import { tempDir } from "../helpers/temp.js";
import { expectError } from "./helpers.js";

/** A front end's view of a directory: the service is discovered from cwd, as the CLI does it. */
function frontEnd(cwd: string) {
  const opened: ArbeitService[] = [];
  const ctx: ToolContext = {
    caller: { session: "ses-init", agent: "tester" },
    cwd,
    service: async () => {
      const service = await openProject({ cwd });
      opened.push(service);
      return service;
    },
  };
  return {
    call: (tool: string, args: unknown) => invokeTool(findTool(tool)!, args, ctx) as Promise<Envelope<any>>,
    close: async () => {
      for (const service of opened) await service.close();
    },
  };
}

/** Arguments that pass every tool's schema, so the only possible failure is the missing project. */
const VALID_ARGS: Record<string, unknown> = {
  arbeit_task_create: { title: "t" },
  arbeit_task_get: { task_id: "tkt-aaaaaaaa" },
  arbeit_task_update: { task_id: "tkt-aaaaaaaa", title: "t" },
  arbeit_task_delete: { task_id: "tkt-aaaaaaaa" },
  arbeit_task_start_work: { task_id: "tkt-aaaaaaaa" },
  arbeit_task_stop_work: { task_id: "tkt-aaaaaaaa" },
  arbeit_context_add: { task_id: "tkt-aaaaaaaa", type: "note", content: "c" },
  arbeit_progress_add: { task_id: "tkt-aaaaaaaa", items: ["x"] },
  arbeit_progress_complete: { item_ids: ["prg-aaaaaaaa"] },
  arbeit_relationship: { action: "add", from_task_id: "tkt-aaaaaaaa", to_task_id: "tkt-bbbbbbbb", type: "blocks" },
  arbeit_query: { query: "tasks" },
};

describe("arbeit_init", () => {
  let dir: string;
  let cleanup: () => void;
  let front: ReturnType<typeof frontEnd>;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    front = frontEnd(dir);
  });
  afterEach(async () => {
    await front.close();
    cleanup();
  });

  it("creates .arbeit/arbeit.db in the working directory and reports its path", async () => {
    const envelope = await front.call("arbeit_init", {});
    assert.equal(envelope.success, true);
    assert.equal(envelope.data.initialized, true);
    assert.equal(envelope.data.path, join(dir, ".arbeit", "arbeit.db"));
    assert.ok(existsSync(join(dir, ".arbeit", "arbeit.db")));
  });

  it("makes the project usable by every other tool", async () => {
    await front.call("arbeit_init", {});
    const created = await front.call("arbeit_task_create", { title: "first" });
    assert.equal(created.success, true);
  });

  it("refuses a second init in the same directory with ALREADY_INITIALIZED", async () => {
    await front.call("arbeit_init", {});
    expectError(await front.call("arbeit_init", {}), "ALREADY_INITIALIZED");
  });

  it("refuses when .arbeit/ already exists, even without a database in it", async () => {
    mkdirSync(join(dir, ".arbeit"));
    expectError(await front.call("arbeit_init", {}), "ALREADY_INITIALIZED");
  });

  it("rejects arguments, since it takes none", async () => {
    expectError(await front.call("arbeit_init", { path: "/elsewhere" }), "INVALID_ARGUMENT");
  });

  it("checks the core tools below, each of them in the catalogue", () => {
    for (const tool of Object.keys(VALID_ARGS)) assert.ok(TOOL_NAMES.includes(tool), `${tool} is not in the catalogue`);
  });

  for (const [tool, args] of Object.entries(VALID_ARGS)) {
    it(`${tool} answers NOT_INITIALIZED before arbeit_init`, async () => {
      expectError(await front.call(tool, args), "NOT_INITIALIZED");
      assert.equal(existsSync(join(dir, ".arbeit")), false, "the failed call created .arbeit/");
    });
  }
});
