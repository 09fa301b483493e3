import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createArbeitHooks } from "../../src/opencode/plugin.js";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { afterTool, call, event, type Hooks, systemPrompt } from "../opencode/plugin-driver.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { type Checkout, type CountingProxy, checkout, closedPort, countingProxy } from "./harness.js";

/**
 * The OpenCode plugin's hooks and tools, driven in-process the way OpenCode calls them, in a
 * checkout pointed at a real `arbeit serve`: each tool call and each hook that needs the store is
 * exactly one HTTP request (counted by a proxy), and its effect is on the service's store.
 */

const git = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd: dir,
    encoding: "utf8",
  });

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`the OpenCode plugin in a checkout pointed at arbeit serve (${engine} behind it)`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let server: UiProject;
    let service: Service;
    let proxy: CountingProxy;
    let laptop: Checkout;
    let hooks: Hooks;
    let token: string;
    let taskId: string;
    const logged: string[] = [];

    const direct = async (args: string[]) => {
      const result = await runCli(args, { cwd: server.dir, env: server.env });
      assert.equal(result.code, 0, `${args.join(" ")}: ${result.stdout}${result.stderr}`);
      return result.json;
    };
    const files = async () => {
      const query = { query: "files_for_task", params: { task_id: taskId } };
      const { data } = await direct(["call", "arbeit_query", JSON.stringify(query)]);
      return data.files.map((file: { file_path: string }) => file.file_path).sort();
    };
    /** The HTTP requests `run` made. */
    const requestsOf = async (run: () => Promise<unknown>) => {
      const before = proxy.requests.length;
      await run();
      return proxy.requests.slice(before);
    };
    const plugin = (env: Record<string, string>) => {
      const client = {
        app: { log: async (entry: { body: { message: string } }) => void logged.push(entry.body.message) },
      };
      return createArbeitHooks({ directory: laptop.dir, client } as never, {}, env);
    };

    before(async () => {
      server = await uiProject(engine);
      token = await makeToken(server, ["--agent", "oc-agent"]);
      service = await startService(server);
      proxy = await countingProxy(service.url);
      laptop = checkout();
      assert.equal((await laptop.cli(["init", "--server", proxy.url, "--json"])).code, 0);
      mkdirSync(join(laptop.dir, "src"));
      writeFileSync(join(laptop.dir, "src", "a.ts"), "");
      hooks = await plugin({ ARBEIT_TOKEN: token });
    });
    after(async () => {
      await hooks?.dispose?.();
      await proxy?.close();
      await service?.stop("SIGKILL");
      await server?.close();
      laptop?.close();
    });

    it("a tool call is one request, made on the service as the token's agent in OpenCode's session", async () => {
      const requests = await requestsOf(async () => {
        const created = await call(hooks, "arbeit_task_create", { title: "Plugin over HTTP" }, "ses_main");
        assert.equal(created.envelope.success, true, JSON.stringify(created.envelope));
        taskId = created.envelope.data.task.id;
      });
      assert.deepEqual(requests, ["POST /api/call"]);
      const started = await call(hooks, "arbeit_task_start_work", { task_id: taskId }, "ses_main");
      assert.equal(started.envelope.success, true);
      const task = (await direct(["task", "get", taskId, "--json"])).data.task;
      assert.deepEqual([task.owner, task.claim_session], ["oc-agent", "ses_main"]);
    });

    it("before a write, the reservation check is one request: another session's exclusive file is refused", async () => {
      await direct([
        "--session",
        "ses_other",
        "--agent",
        "bob",
        "call",
        "arbeit_task_claim",
        JSON.stringify({ paths: ["src/locked/**"] }),
      ]);
      const before = (filePath: string) =>
        hooks["tool.execute.before"]!(
          { tool: "write", sessionID: "ses_main", callID: `call_${Math.random()}` },
          { args: { filePath, content: "x" } },
        );
      let refusal: unknown;
      const denied = await requestsOf(() =>
        before(join(laptop.dir, "src", "locked", "x.ts")).catch((error) => {
          refusal = error;
        }),
      );
      assert.deepEqual(denied, ["POST /api/hook"]);
      assert.match(String(refusal), /src\/locked\/x\.ts is reserved exclusively by bob \(session ses_other\)/);
      assert.deepEqual(await requestsOf(() => before(join(laptop.dir, "src", "free.ts"))), ["POST /api/hook"]);
      await direct([
        "--session",
        "ses_other",
        "call",
        "arbeit_task_claim",
        JSON.stringify({ action: "release", paths: ["src/locked/**"] }),
      ]);
    });

    it("each file tool call is one request; paths are made relative to the laptop's project root", async () => {
      const read = await requestsOf(() =>
        afterTool(hooks, "ses_main", "read", { filePath: join(laptop.dir, "src", "a.ts") }),
      );
      const patch = await requestsOf(() =>
        afterTool(
          hooks,
          "ses_main",
          "apply_patch",
          { patchText: "" },
          {
            files: [
              { filePath: join(laptop.dir, "src", "b.ts"), type: "add" },
              { filePath: join(laptop.dir, "src", "c.ts"), type: "update" },
            ],
          },
        ),
      );
      const edited = await requestsOf(() =>
        event(hooks, { type: "file.edited", properties: { file: join(laptop.dir, "src", "d.ts") } }),
      );
      for (const requests of [read, patch, edited]) assert.deepEqual(requests, ["POST /api/hook"]);
      // A file outside the project is not sent at all.
      assert.deepEqual(await requestsOf(() => afterTool(hooks, "ses_main", "read", { filePath: "/etc/hosts" })), []);
      assert.deepEqual(await files(), ["src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts"]);
    });

    it("a sub-agent's session records its files, as its own session, on its parent's task", async () => {
      await event(hooks, { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_main" } } });
      await afterTool(hooks, "ses_child", "write", { filePath: join(laptop.dir, "src", "child.ts") });
      assert.ok((await files()).includes("src/child.ts"));
    });

    it("the system prompt is one request: the briefing of the session's task, from the service", async () => {
      let texts: string[] = [];
      const requests = await requestsOf(async () => {
        texts = await systemPrompt(hooks, "ses_main");
      });
      assert.deepEqual(requests, ["POST /api/hook"]);
      assert.match(texts[0]!, /Arbeit: this session is working on/);
      assert.match(texts[0]!, /Plugin over HTTP/);
      // The next call repeats the same briefing, with news of others since.
      await direct([
        "call",
        "arbeit_context_add",
        JSON.stringify({ task_id: taskId, type: "note", content: "Note from the service's side" }),
      ]);
      const next = await systemPrompt(hooks, "ses_main");
      assert.equal(next[0], texts[0]);
      assert.match(next[1]!, /Note from the service's side/);
    });

    it("a todo list update is one request, mirrored as progress of the session's task", async () => {
      const todos = [
        { content: "Write the client", status: "completed" },
        { content: "Test it", status: "pending" },
      ];
      const requests = await requestsOf(() =>
        event(hooks, { type: "todo.updated", properties: { sessionID: "ses_main", todos } }),
      );
      assert.deepEqual(requests, ["POST /api/hook"]);
      const query = JSON.stringify({ task_id: taskId, include: ["progress"] });
      const progress = (await direct(["call", "arbeit_task_get", query])).data.progress;
      assert.deepEqual(
        progress.map((item: { content: string; completed: boolean }) => [item.content, item.completed]),
        [
          ["Write the client", true],
          ["Test it", false],
        ],
      );
    });

    it("compaction is one request, keeping the task's briefing", async () => {
      const output = { context: [] as string[] };
      const requests = await requestsOf(() =>
        hooks["experimental.session.compacting"]!({ sessionID: "ses_main" }, output as never),
      );
      assert.deepEqual(requests, ["POST /api/hook"]);
      assert.match(output.context[0]!, /Plugin over HTTP/);
    });

    it("a commit made by a bash call is read from the laptop's repository and recorded in one request", async () => {
      git(laptop.dir, "init", "-q");
      git(laptop.dir, "add", "src");
      const printed = git(laptop.dir, "commit", "-m", "Add the client");
      const requests = await requestsOf(() =>
        afterTool(
          hooks,
          "ses_main",
          "bash",
          { command: 'git commit -m "Add the client"' },
          { output: printed, exit: 0 },
        ),
      );
      assert.deepEqual(requests, ["POST /api/hook"]);
      const query = JSON.stringify({ task_id: taskId, include: ["commits"] });
      const { commits } = (await direct(["call", "arbeit_task_get", query])).data;
      assert.deepEqual(
        commits.map((commit: { subject: string; files: string[] }) => [commit.subject, commit.files]),
        [["Add the client", ["src/a.ts"]]],
      );
    });

    it("a read-only token's plugin is briefed and writes nothing", async () => {
      const reader = await makeToken(server, ["--agent", "oc-agent", "--read-only"]);
      const readOnly = await plugin({ ARBEIT_TOKEN: reader });
      try {
        const events = async () =>
          (await runCli(["export", "-"], { cwd: server.dir, env: server.env })).stdout
            .split("\n")
            .filter((line) => line.startsWith('{"table":"events"')).length;
        const count = await events();
        await afterTool(readOnly, "ses_main", "read", { filePath: join(laptop.dir, "src", "e.ts") });
        await event(readOnly, {
          type: "todo.updated",
          properties: { sessionID: "ses_main", todos: [{ content: "Read only", status: "pending" }] },
        });
        const texts = await systemPrompt(readOnly, "ses_main");
        assert.match(texts[0]!, /Plugin over HTTP/);
        assert.equal(await events(), count);
        assert.deepEqual(logged, []);
      } finally {
        await readOnly.dispose!();
      }
    });

    it("no hook made a local store", () => {
      assert.equal(existsSync(join(laptop.dir, ".arbeit", "arbeit.db")), false);
    });
  });
}

describe("the OpenCode plugin when its service cannot be reached", () => {
  it("logs a warning naming the service, makes no local store, and never throws into OpenCode", async () => {
    const laptop = checkout();
    const url = `http://127.0.0.1:${await closedPort()}`;
    try {
      assert.equal((await laptop.cli(["init", "--server", url, "--json"])).code, 0);
      const logged: string[] = [];
      const client = {
        app: { log: async (entry: { body: { message: string } }) => void logged.push(entry.body.message) },
      };
      const hooks = await createArbeitHooks({ directory: laptop.dir, client } as never, {}, { ARBEIT_TOKEN: "arb_x" });
      try {
        await afterTool(hooks, "ses_1", "read", { filePath: join(laptop.dir, "a.ts") });
        assert.deepEqual(await systemPrompt(hooks, "ses_1"), []);
        const answer = await call(hooks, "arbeit_query", { query: "ready" }, "ses_1");
        assert.equal(answer.envelope.error.code, "STORE_UNAVAILABLE");
        assert.equal(logged.length, 2);
        for (const message of logged) assert.ok(message.includes(url), message);
        assert.equal(existsSync(join(laptop.dir, ".arbeit", "arbeit.db")), false);
      } finally {
        await hooks.dispose!();
      }
    } finally {
      laptop.close();
    }
  });
});
