import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { tempDir } from "../helpers/temp.js";

/**
 * The package as a user imports it: `import ... from "arbeit"` resolves, through package.json
 * "exports" (Node's self-reference), to the built dist/index.js. The specifier is a variable so
 * that the compiler takes the types from src/ and never needs dist/ to typecheck.
 */
type Arbeit = typeof import("../../src/index.js");
const PACKAGE = "arbeit";
const load = (): Promise<Arbeit> => import(PACKAGE);

const root = fileURLToPath(new URL("../../", import.meta.url));

describe('the "arbeit" package entry', () => {
  it("resolves to the built dist/index.js with its type declarations", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    assert.equal(pkg.name, "arbeit");
    assert.equal(import.meta.resolve(PACKAGE), new URL("dist/index.js", `file://${root}`).href);
    assert.ok(existsSync(join(root, pkg.exports["."].types)), "dist/index.d.ts is built");
  });

  it("exports the library surface", async () => {
    const arbeit = await load();
    for (const name of [
      "openArbeit",
      "SqliteTaskStore",
      "InMemoryTaskStore",
      "ArbeitService",
      "createArbeitTools",
      "taskFragment",
      "tasksFragment",
      "TOOLS",
      "findTool",
      "invokeTool",
      "ArbeitError",
      "verifyWebhook",
    ] as const) {
      assert.ok(arbeit[name], `exports ${name}`);
    }
    assert.ok(arbeit.TOOLS.length >= 12);
  });

  it("imports only files the build wrote: the CLI's own modules are bundled, not in dist/ beside the library", () => {
    // The OpenCode plugin and the library load dist/ module by module; one import of a file that
    // only the CLI's bundle holds (dist/cli has no module files) stops the plugin from loading.
    const missing: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (path !== join(root, "dist", "cli") && path !== join(root, "dist", "ui")) walk(path);
        } else if (entry.name.endsWith(".js")) {
          const text = readFileSync(path, "utf8");
          for (const match of text.matchAll(/(?:from\s*|import\s*\(\s*)"(\.{1,2}\/[^"]+)"/g)) {
            if (!existsSync(resolve(dirname(path), match[1]!)))
              missing.push(`${path.slice(root.length)} imports ${match[1]}`);
          }
        }
      }
    };
    walk(join(root, "dist"));
    assert.deepEqual(missing, []);
  });

  it("loads neither the optional `ai` peer nor the MCP SDK", () => {
    const seen = new Set<string>();
    const bare = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, "utf8");
      // Static imports and re-exports only; `import("...")` is lazy and loads nothing up front.
      for (const match of source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|^\s*import\s+"([^"]+)"/gm)) {
        const spec = match[1] ?? match[2]!;
        if (spec.startsWith(".")) walk(resolve(dirname(file), spec));
        else bare.add(spec);
      }
    };
    walk(join(root, "dist", "index.js"));
    assert.ok(seen.size > 20 && bare.has("zod"), "the walk follows the import graph");
    const offending = [...bare].filter(
      (spec) => spec === "ai" || spec.startsWith("ai/") || spec.startsWith("@modelcontextprotocol/"),
    );
    assert.deepEqual(offending, []);
  });

  it("runs a small workflow: open, create, work, context, query, fragments, tools", async () => {
    const arbeit = await load();
    const { dir, cleanup } = tempDir();
    try {
      await assert.rejects(arbeit.openArbeit({ cwd: dir }), (error: unknown) => {
        assert.ok(error instanceof arbeit.ArbeitError);
        assert.equal(error.code, "NOT_INITIALIZED");
        return true;
      });
      const service = await arbeit.openArbeit({ cwd: dir, create: true });
      assert.ok(existsSync(join(dir, ".arbeit", "arbeit.db")));
      const caller = { session: "conv-1", agent: "library-test" };
      const epic = (await service.createTask({ title: "Ship v1", type: "epic" }, caller)).data.task;
      const child = (await service.createTask({ title: "Write docs", parent_id: epic.id }, caller)).data.task;
      const started = await service.startWork({ task_id: child.id }, caller);
      assert.equal(started.data.task.status, "in_progress");
      await service.addContext({ task_id: child.id, type: "decision", content: "Markdown in docs/" }, caller);

      const briefing = (await service.getTask({ task_id: child.id, include: ["context", "parent"] })).data;
      assert.match(arbeit.taskFragment(briefing), /- decision: Markdown in docs\//);
      // The epic waits for its child, which is in progress: a task of its own is what is ready.
      const next = (await service.createTask({ title: "Plan v2" }, caller)).data.task;
      const ready = (await service.query({ query: "ready" }, caller)).data as { tasks: Array<{ id: string }> };
      assert.equal(arbeit.tasksFragment(ready.tasks as never).split("\n")[0], "Tasks (1):");
      assert.equal(ready.tasks[0]!.id, next.id);

      // The catalogue runs the same way every front end runs it.
      const ctx = { caller, cwd: dir, service: async () => service };
      const envelope = await arbeit.invokeTool(arbeit.findTool("arbeit_task_get")!, { task_id: "nope" }, ctx);
      assert.equal(envelope.success, false);
      if (!envelope.success) assert.equal(envelope.error.code, "INVALID_ID");

      const tools = arbeit.createArbeitTools(service, { agent: "library-test" });
      const listed = (await tools.arbeit_query!.execute({ query: "children_of", params: { task_id: epic.id } })) as any;
      assert.deepEqual(
        listed.data.tasks.map((t: { id: string }) => t.id),
        [child.id],
      );
      await service.close();

      // Found again from a subdirectory, like git.
      mkdirSync(join(dir, "src", "deep"), { recursive: true });
      const again = await arbeit.openArbeit({ cwd: join(dir, "src", "deep") });
      assert.equal(again.projectRoot, dir);
      assert.equal((await again.getTask({ task_id: child.id })).data.task.title, "Write docs");
      await again.close();
    } finally {
      cleanup();
    }
  });

  it("works on an in-memory store", async () => {
    const arbeit = await load();
    const store = await arbeit.InMemoryTaskStore.open();
    const service = new arbeit.ArbeitService(store, { projectRoot: "/scratch" });
    const created = await service.createTask({ title: "Scratch" }, { session: null, agent: null });
    assert.equal(created.data.task.list_id, "default");
    await service.close();
  });
});
