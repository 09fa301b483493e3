import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { makeToken, type Service, startService } from "../serve/harness.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";
import { type Checkout, type CountingProxy, checkout, closedPort, countingProxy, recordLoads } from "./harness.js";

for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`a checkout pointed at arbeit serve (${engine} behind it)`, {
    skip: engine === "postgres" ? await postgresSkip() : false,
  }, () => {
    let project: UiProject;
    let service: Service;
    let proxy: CountingProxy;
    let laptop: Checkout;
    let alice: string;
    /** The same call made in the service's own project, on its store directly. */
    const direct = (args: string[]) => runCli(args, { cwd: project.dir, env: project.env });
    /** How many HTTP requests `run` made through the proxy. */
    const requestsOf = async (run: () => Promise<unknown>) => {
      const before = proxy.requests.length;
      await run();
      return proxy.requests.slice(before);
    };

    before(async () => {
      project = await uiProject(engine);
      alice = await makeToken(project, ["--agent", "alice"]);
      service = await startService(project);
      proxy = await countingProxy(service.url);
      laptop = checkout();
      const init = await laptop.cli(["init", "--server", proxy.url, "--json"]);
      assert.equal(init.code, 0, init.stdout + init.stderr);
      const login = await laptop.cli(["login", proxy.url, "--token-stdin", "--json"], { input: `${alice}\n` });
      assert.equal(login.code, 0, login.stdout + login.stderr);
    });
    after(async () => {
      await proxy?.close();
      await service?.stop("SIGKILL");
      await project?.close();
      laptop?.close();
    });

    it("init --server records the service's URL, no token, and makes no database", () => {
      const folder = join(laptop.dir, ".arbeit");
      assert.deepEqual(JSON.parse(readFileSync(join(folder, "service.json"), "utf8")), { url: proxy.url });
      assert.deepEqual(readdirSync(folder).sort(), [".gitignore", "service.json"]);
      for (const file of readdirSync(folder)) assert.ok(!readFileSync(join(folder, file), "utf8").includes(alice));
    });

    it("login keeps the token in the user's config, readable by the user alone, keyed by the service's origin", () => {
      const file = join(laptop.config, "arbeit", "credentials.json");
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { [proxy.url]: { token: alice } });
    });

    it("arbeit call and a tool command answer the same envelopes as the same calls on the store directly", async () => {
      const made = await laptop.cli(["call", "arbeit_task_create", '{"title": "Made from the laptop"}']);
      assert.equal(made.code, 0, made.stdout + made.stderr);
      const id = made.json.data.task.id;
      const getArgs = ["call", "arbeit_task_get", JSON.stringify({ task_id: id })];
      assert.deepEqual((await laptop.cli(getArgs)).json, (await direct(getArgs)).json);
      const friendly = await laptop.cli(["task", "get", id, "--json"]);
      assert.equal(friendly.code, 0);
      assert.deepEqual(friendly.json, (await direct(["task", "get", id, "--json"])).json);
      // A tool error keeps its code and exit status.
      const missing = ["task", "get", "tkt-zzzzzzzz", "--json"];
      const [remote, local] = [await laptop.cli(missing), await direct(missing)];
      assert.deepEqual([remote.code, remote.json], [local.code, local.json]);
      assert.equal(remote.json.error.code, "TASK_NOT_FOUND");
      // A usage error is still the CLI's own, before anything is sent.
      const requests = await requestsOf(async () =>
        assert.equal((await laptop.cli(["task", "create", "x", "--nonsense"])).code, 2),
      );
      assert.deepEqual(requests, []);
    });

    it("each CLI call is exactly one HTTP request to the service", async () => {
      const call = await requestsOf(() => laptop.cli(["call", "arbeit_query", '{"query": "ready"}']));
      const create = await requestsOf(() => laptop.cli(["task", "create", "Counted", "--json"]));
      const batchFile = join(laptop.dir, "batch.json");
      writeFileSync(batchFile, JSON.stringify([{ tool: "arbeit_task_create", args: { title: "In a batch" } }]));
      const batch = await requestsOf(() => laptop.cli(["batch", batchFile, "--json"]));
      for (const requests of [call, create, batch]) assert.deepEqual(requests, ["POST /api/call"]);
    });

    it("acts as the token's agent, whatever --agent or ARBEIT_AGENT say", async () => {
      const id = (await laptop.cli(["task", "create", "Whose claim", "--json"])).json.data.task.id;
      const claimed = await laptop.cli(["task", "claim", id, "--agent", "mallory", "--json"], {
        env: { ARBEIT_AGENT: "mallory" },
      });
      assert.equal(claimed.code, 0, claimed.stdout);
      const task = (await direct(["task", "get", id, "--json"])).json.data.task;
      assert.equal(task.owner, "alice");
      assert.equal(task.claim_session, "agent:alice");
    });

    it("a session from --session or ARBEIT_SESSION goes with the call", async () => {
      const id = (await laptop.cli(["task", "create", "In my session", "--json"])).json.data.task.id;
      await laptop.cli(["task", "claim", id, "--json"], { env: { ARBEIT_SESSION: "laptop-1" } });
      assert.equal((await direct(["task", "get", id, "--json"])).json.data.task.claim_session, "laptop-1");
    });

    it("ARBEIT_REQUEST_ID goes with the call: a retry replays the service's first answer", async () => {
      const env = { ARBEIT_REQUEST_ID: `laptop retry ${engine}` };
      const first = await laptop.cli(["task", "create", `Retried on ${engine}`, "--json"], { env });
      const again = await laptop.cli(["task", "create", `Retried on ${engine}`, "--json"], { env });
      assert.equal(first.code, 0, first.stdout + first.stderr);
      assert.deepEqual(again.json, first.json);
      const tasks = (await direct(["call", "arbeit_query", '{"query": "tasks"}'])).json.data.tasks;
      assert.equal(tasks.filter((task: { title: string }) => task.title === `Retried on ${engine}`).length, 1);
    });

    it("a file path in the arguments is made relative to the local project root before it is sent", async () => {
      // Work recorded on the service's side, on src/app.ts of its own checkout.
      const id = (await direct(["task", "create", "Touches app.ts", "--json"])).json.data.task.id;
      await direct(["task", "start-work", id, "--json"]);
      mkdirSync(join(project.dir, "src"), { recursive: true });
      writeFileSync(join(project.dir, "src", "app.ts"), "");
      assert.equal((await direct(["track", "src/app.ts", "--json"])).json.data.tracked, true);
      await direct(["task", "stop-work", id, "--json"]);
      // The laptop names the same file by its own absolute path.
      const args = { query: "tasks_for_file", params: { file_path: join(laptop.dir, "src", "app.ts") } };
      const found = await laptop.cli(["call", "arbeit_query", JSON.stringify(args)]);
      assert.equal(found.code, 0, found.stdout);
      assert.deepEqual(
        found.json.data.tasks.map((task: { id: string }) => task.id),
        [id],
      );
    });

    it("ARBEIT_TOKEN is used instead of the stored token", async () => {
      const refused = await laptop.cli(["call", "arbeit_query", '{"query": "ready"}'], {
        env: { ARBEIT_TOKEN: "arb_not_a_token" },
      });
      assert.equal(refused.code, 1);
      assert.equal(refused.json.error.code, "UNAUTHORIZED");
      assert.match(refused.json.error.suggestions.join(" "), new RegExp(`arbeit login ${proxy.url}`));
    });

    it("a default list (--list / ARBEIT_LIST) goes with the call: the task is made in it, reads are scoped to it", async () => {
      const requests = await requestsOf(async () => {
        const made = await laptop.cli(["task", "create", "Listed", "--json"], { env: { ARBEIT_LIST: "team-a" } });
        assert.equal(made.code, 0, made.stdout + made.stderr);
        assert.equal(made.json.data.task.list_id, "team-a");
      });
      assert.deepEqual(requests, ["POST /api/call"]);
      const other = await laptop.cli(["task", "create", "Elsewhere", "--list", "team-b", "--json"]);
      assert.equal(other.json.data.task.list_id, "team-b");
      // On the service's own store, directly: the task is in the list.
      const listed = await direct(["query", "tasks", "--list", "team-a", "--json"]);
      assert.deepEqual(
        listed.json.data.tasks.map((task: { title: string }) => task.title),
        ["Listed"],
      );
      const scoped = await laptop.cli(["query", "tasks", "--list", "team-b", "--json"]);
      assert.deepEqual(
        scoped.json.data.tasks.map((task: { title: string }) => task.title),
        ["Elsewhere"],
      );
    });

    it("without a token the call is UNAUTHORIZED, says to run arbeit login, and sends nothing", async () => {
      const stranger = checkout();
      try {
        const requests = await requestsOf(async () => {
          const answer = await stranger.cli(["call", "arbeit_query", '{"query": "ready"}'], {
            env: { ARBEIT_URL: proxy.url },
          });
          assert.equal(answer.code, 1);
          assert.equal(answer.json.error.code, "UNAUTHORIZED");
          assert.match(answer.json.error.suggestions[0], new RegExp(`Run \`arbeit login ${proxy.url}\``));
        });
        assert.deepEqual(requests, []);
      } finally {
        stranger.close();
      }
    });

    it("login with a token the service refuses stores nothing", async () => {
      const stranger = checkout();
      try {
        const answer = await stranger.cli(["login", proxy.url, "--token-stdin"], { input: "arb_wrong\n" });
        assert.equal(answer.code, 1);
        assert.equal(answer.json.error.code, "UNAUTHORIZED");
        assert.equal(existsSync(join(stranger.config, "arbeit", "credentials.json")), false);
      } finally {
        stranger.close();
      }
    });

    it("an unreachable service is STORE_UNAVAILABLE naming its URL", async () => {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const answer = await laptop.cli(["task", "create", "Nowhere", "--json"], {
        env: { ARBEIT_URL: url, ARBEIT_TOKEN: alice },
      });
      assert.equal(answer.code, 1);
      assert.equal(answer.json.error.code, "STORE_UNAVAILABLE");
      assert.ok(answer.json.error.message.includes(url), answer.json.error.message);
    });

    it("arbeit status shows the service, that it answers and that there is a token", async () => {
      const status = await laptop.cli(["status", "--json"]);
      assert.equal(status.code, 0, status.stdout + status.stderr);
      const { versions, remote, ...rest } = status.json;
      assert.deepEqual(rest, {
        ok: true,
        store: { engine: "service", url: proxy.url, from: "record", file: join(laptop.dir, ".arbeit", "service.json") },
        token: "stored",
        reachable: true,
        attention: [],
      });
      assert.equal(versions.service, versions.client);
      assert.equal(remote.token.name, "alice");
    });

    it("commands that work on a store of their own refuse, and make no local store", async () => {
      const answer = await laptop.cli(["export", "-"]);
      assert.equal(answer.code, 1);
      assert.equal(answer.json.error.code, "STORE_UNAVAILABLE");
      assert.ok(answer.json.error.message.includes(proxy.url));
      assert.equal(existsSync(join(laptop.dir, ".arbeit", "arbeit.db")), false);
    });

    it("a remote arbeit call loads no zod schema, no SQLite driver and not the MCP SDK", async () => {
      const record = join(laptop.config, "load-record.json");
      const env: NodeJS.ProcessEnv = { ...process.env, ...laptop.env };
      for (const key of ARBEIT_SETTINGS) delete env[key];
      const code = await recordLoads(CLI, ["call", "arbeit_query", '{"query": "ready"}'], laptop.dir, env, record);
      assert.equal(code, 0);
      const loaded = JSON.parse(readFileSync(record, "utf8"));
      assert.deepEqual(loaded.bundles, ["arbeit-core.cjs"]);
      // zod's shared building blocks (id and name patterns) carry no description; no tool's schema is built.
      assert.deepEqual(
        loaded.described.filter((entry: string) => !entry.startsWith("{")),
        [],
      );
      assert.deepEqual(loaded.packages, []);
    });

    it("arbeit mcp serves the catalogue over stdio and sends each tool call to the service", async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, ...laptop.env };
      for (const key of ARBEIT_SETTINGS) delete env[key];
      const child = spawn(process.execPath, [CLI, "mcp"], { cwd: laptop.dir, env, stdio: ["pipe", "pipe", "pipe"] });
      const client = new Client({ name: "remote-test", version: "1.0.0" });
      try {
        await client.connect(new ChildTransport(child));
        const listed = (await client.listTools()).tools.map((tool) => tool.name);
        assert.ok(listed.includes("arbeit_task_create"));
        const requests = await requestsOf(async () => {
          const result = (await client.callTool({
            name: "arbeit_task_create",
            arguments: { title: "Over stdio, then HTTP" },
          })) as { structuredContent?: any };
          assert.equal(result.structuredContent.success, true, JSON.stringify(result));
          const id = result.structuredContent.data.task.id;
          assert.equal((await direct(["task", "get", id, "--json"])).json.data.task.title, "Over stdio, then HTTP");
        });
        assert.deepEqual(requests, ["POST /api/call"]);
      } finally {
        await client.close();
      }
    });

    it("arbeit mcp with a default list (ARBEIT_LIST) makes its tasks in that list on the service", async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, ...laptop.env };
      for (const key of ARBEIT_SETTINGS) delete env[key];
      env.ARBEIT_LIST = "mcp-list";
      const child = spawn(process.execPath, [CLI, "mcp"], { cwd: laptop.dir, env, stdio: ["pipe", "pipe", "pipe"] });
      const client = new Client({ name: "remote-test", version: "1.0.0" });
      try {
        await client.connect(new ChildTransport(child));
        const result = (await client.callTool({
          name: "arbeit_task_create",
          arguments: { title: "Listed over stdio" },
        })) as { structuredContent?: any };
        assert.equal(result.structuredContent.success, true, JSON.stringify(result));
        const id = result.structuredContent.data.task.id;
        assert.equal((await direct(["task", "get", id, "--json"])).json.data.task.list_id, "mcp-list");
      } finally {
        await client.close();
      }
    });

    it("logout forgets the token; later calls are UNAUTHORIZED", async () => {
      const out = await laptop.cli(["logout", proxy.url, "--json"]);
      assert.equal(out.code, 0);
      assert.equal(out.json.data.forgotten, true);
      const after = await laptop.cli(["call", "arbeit_query", '{"query": "ready"}']);
      assert.equal(after.json.error.code, "UNAUTHORIZED");
    });
  });
}

describe("arbeit init --server", () => {
  it("is in arbeit init --help", async () => {
    const help = await runCli(["init", "--help"], { cwd: process.cwd() });
    assert.match(help.stdout, /--server <url>/);
  });

  it("refuses a URL that holds a password or is not http(s), and records nothing", async () => {
    const laptop = checkout();
    try {
      for (const url of ["https://me:secret@arbeit.example.com", "ftp://arbeit.example.com", "not a url"]) {
        const answer = await laptop.cli(["init", "--server", url, "--json"]);
        assert.equal(answer.code, 1, url);
        assert.equal(answer.json.error.code, "INVALID_ARGUMENT", url);
        assert.equal(existsSync(join(laptop.dir, ".arbeit")), false, url);
      }
    } finally {
      laptop.close();
    }
  });
});

describe("the user's credentials file", () => {
  it("when it is not valid JSON, a call is UNAUTHORIZED naming the file, and the file is left as it is", async () => {
    const laptop = checkout();
    try {
      const file = join(laptop.config, "arbeit", "credentials.json");
      mkdirSync(join(laptop.config, "arbeit"));
      writeFileSync(file, "[1");
      const env = { ARBEIT_URL: `http://127.0.0.1:${await closedPort()}` };
      const answer = await laptop.cli(["call", "arbeit_query", '{"query": "ready"}'], { env });
      assert.equal(answer.code, 1);
      assert.equal(answer.json.error.code, "UNAUTHORIZED");
      assert.ok(answer.json.error.message.includes(file));
      assert.equal(readFileSync(file, "utf8"), "[1");
    } finally {
      laptop.close();
    }
  });
});

describe("arbeit login writes the credentials file safely", () => {
  let project: UiProject;
  let service: Service;
  let token: string;
  before(async () => {
    project = await uiProject("sqlite");
    token = await makeToken(project, ["--agent", "alice"]);
    service = await startService(project);
  });
  after(async () => {
    await service?.stop("SIGKILL");
    await project?.close();
  });

  /** `arbeit login` in `laptop`, with `planted` called with its process id as soon as it starts. */
  const login = (laptop: Checkout, planted: (pid: number) => void = () => {}) =>
    new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env, ...laptop.env };
      for (const key of ARBEIT_SETTINGS) delete env[key];
      const child = spawn(process.execPath, [CLI, "login", service.url, "--token-stdin", "--json"], {
        cwd: laptop.dir,
        env,
        stdio: ["pipe", "pipe", "ignore"],
      });
      planted(child.pid!);
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout }));
      child.stdin.end(`${token}\n`);
    });

  it("a symlink planted where it writes its scratch file is not followed: the file it points to is untouched", async () => {
    const laptop = checkout();
    const elsewhere = checkout();
    try {
      const folder = join(laptop.config, "arbeit");
      mkdirSync(folder, { mode: 0o700 });
      const victim = join(elsewhere.dir, "victim.txt");
      writeFileSync(victim, "untouched\n", { mode: 0o644 });
      const file = join(folder, "credentials.json");
      // Every name a scratch file of this process could be given from its process id.
      const answer = await login(laptop, (pid) => {
        for (const name of [`${file}.${pid}.tmp`, `${file}.tmp`]) symlinkSync(victim, name);
      });
      assert.equal(answer.code, 0, answer.stdout);
      assert.equal(readFileSync(victim, "utf8"), "untouched\n");
      assert.equal(statSync(victim).mode & 0o777, 0o644);
      assert.ok(lstatSync(file).isFile(), "credentials.json is a regular file");
      assert.equal(lstatSync(file).mode & 0o777, 0o600);
      assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { [service.url]: { token } });
    } finally {
      laptop.close();
      elsewhere.close();
    }
  });

  it("refuses a credentials folder or file that is a symlink, or a folder others may write to, and stores nothing", async () => {
    const elsewhere = checkout();
    try {
      const outside = join(elsewhere.dir, "outside.json");
      writeFileSync(outside, "{}\n", { mode: 0o600 });
      const cases: Array<[string, (folder: string) => void]> = [
        ["the folder is a symlink", (folder) => symlinkSync(elsewhere.dir, folder)],
        ["the folder is a symlink to nowhere", (folder) => symlinkSync(join(elsewhere.dir, "missing"), folder)],
        [
          "the file is a symlink",
          (folder) => {
            mkdirSync(folder, { mode: 0o700 });
            symlinkSync(outside, join(folder, "credentials.json"));
          },
        ],
        [
          "the folder is writable by others",
          (folder) => {
            mkdirSync(folder);
            chmodSync(folder, 0o777);
          },
        ],
      ];
      for (const [what, plant] of cases) {
        const laptop = checkout();
        try {
          plant(join(laptop.config, "arbeit"));
          const answer = await login(laptop);
          assert.equal(answer.code, 1, `${what}: ${answer.stdout}`);
          const envelope = JSON.parse(answer.stdout);
          assert.equal(envelope.error.code, "UNAUTHORIZED", what);
          assert.match(envelope.error.message, /credentials|arbeit/, what);
          assert.deepEqual(readdirSync(elsewhere.dir).sort(), ["outside.json"], what);
          assert.equal(readFileSync(outside, "utf8"), "{}\n", what);
        } finally {
          laptop.close();
        }
      }
    } finally {
      elsewhere.close();
    }
  });
});

describe("arbeit status with ARBEIT_URL", () => {
  it("says the service does not answer and there is no token, exit 1", async () => {
    const laptop = checkout();
    try {
      const url = `http://127.0.0.1:${await closedPort()}`;
      const status = await laptop.cli(["status", "--json"], { env: { ARBEIT_URL: url } });
      assert.equal(status.code, 1);
      assert.deepEqual(status.json.store, { engine: "service", url, from: "ARBEIT_URL" });
      assert.deepEqual([status.json.reachable, status.json.token], [false, "missing"]);
      assert.equal(status.json.attention.length, 2);
      assert.match(status.json.attention[1].hint, new RegExp(`arbeit login ${url}`));
      // Asking about the service made no local store.
      assert.equal(existsSync(join(laptop.dir, ".arbeit")), false);
    } finally {
      laptop.close();
    }
  });
});

describe("a process given ARBEIT_URL in a checkout with a local store", () => {
  it("its Claude Code hooks go to the service, never answering from the local store", async () => {
    const laptop = checkout();
    try {
      assert.equal((await laptop.cli(["init", "--json"])).code, 0);
      assert.equal((await laptop.cli(["task", "create", "Only in the local store", "--json"])).code, 0);
      const url = `http://127.0.0.1:${await closedPort()}`;
      const env = { ...laptop.env, ARBEIT_URL: url, ARBEIT_TOKEN: "arb_anything" };
      const payload = hookPayload(laptop.dir, "claude-1", "SessionStart", { source: "startup" });
      const result = await runHook("session-start", payload, laptop.dir, env);
      assert.equal(result.code, 0);
      // The agent is told the service cannot be asked; nothing comes from the local store.
      assert.match(result.stdout, /coordination is OFF/);
      assert.doesNotMatch(result.stdout, /Only in the local store/);
      assert.ok(result.stderr.includes(url), result.stderr);
    } finally {
      laptop.close();
    }
  });

  it("arbeit track goes to the service: unreachable, it is STORE_UNAVAILABLE naming it, and records nothing locally", async () => {
    const laptop = checkout();
    try {
      assert.equal((await laptop.cli(["init", "--json"])).code, 0);
      const id = (await laptop.cli(["task", "create", "Local", "--json"])).json.data.task.id;
      assert.equal((await laptop.cli(["task", "start-work", id, "--json"])).code, 0);
      writeFileSync(join(laptop.dir, "a.ts"), "");
      const url = `http://127.0.0.1:${await closedPort()}`;
      const tracked = await laptop.cli(["track", "a.ts", "--json"], {
        env: { ARBEIT_URL: url, ARBEIT_TOKEN: "arb_x" },
      });
      assert.equal(tracked.code, 1);
      assert.equal(tracked.json.error.code, "STORE_UNAVAILABLE");
      assert.ok(tracked.json.error.message.includes(url));
      const files = await laptop.cli([
        "call",
        "arbeit_query",
        JSON.stringify({ query: "files_for_task", params: { task_id: id } }),
      ]);
      assert.deepEqual(files.json.data.files, []);
    } finally {
      laptop.close();
    }
  });
});
