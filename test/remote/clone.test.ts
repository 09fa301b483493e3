import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { ChildTransport } from "../helpers/child-transport.js";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";
import { makeToken, opensslMissing, type Service, startService } from "../serve/harness.js";
import { type UiProject, uiProject } from "../ui/harness.js";
import { privateCa } from "./private-ca.js";

const gitMissing = (() => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "git is not on PATH";
  }
})();

/** git in `cwd`, as a person runs it, with a committer of its own and no user config read. */
function git(cwd: string, args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    encoding: "utf8",
  });
}

/**
 * A project set up with `arbeit init --server URL` (and `extra` before it), committed, and a fresh
 * clone of it with a user config folder of its own: a teammate's laptop after `git clone`.
 */
function cloned(url: string, extra: (origin: string) => string[] = () => []) {
  const origin = tempDir("arbeit-origin-");
  const laptop = tempDir("arbeit-clone-");
  const config = tempDir("arbeit-config-");
  const clone = join(laptop.dir, "project");
  const env = { XDG_CONFIG_HOME: config.dir };
  return {
    origin: origin.dir,
    clone,
    config: config.dir,
    async setUp() {
      git(origin.dir, ["init", "-q"]);
      writeFileSync(join(origin.dir, "README.md"), "A project.\n");
      const init = await runCli(["init", "--server", url, ...extra(origin.dir), "--json"], { cwd: origin.dir, env });
      assert.equal(init.code, 0, init.stdout + init.stderr);
      // A file of this checkout's own, as hooks leave them: never committed.
      writeFileSync(join(origin.dir, ".arbeit", "hook-notes.json"), "{}\n");
      git(origin.dir, ["add", "-A"]);
      git(origin.dir, ["commit", "-q", "-m", "Use the team's Arbeit service"]);
      git(laptop.dir, ["clone", "-q", origin.dir, clone]);
      return init.json;
    },
    cli: (args: string[], options: { env?: Record<string, string>; input?: string } = {}) =>
      runCli(args, {
        cwd: clone,
        env: { ...env, ...options.env },
        ...(options.input === undefined ? {} : { input: options.input }),
      }),
    close() {
      origin.cleanup();
      laptop.cleanup();
      config.cleanup();
    },
  };
}

/** `arbeit mcp` in `cwd`: an MCP client connected to it over stdio. */
async function mcpIn(cwd: string, extraEnv: Record<string, string>): Promise<Client> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  for (const key of ARBEIT_SETTINGS) if (!extraEnv[key]) delete env[key];
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn(process.execPath, [CLI, "mcp"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const client = new Client({ name: "clone-test", version: "1.0.0" });
  await client.connect(new ChildTransport(child));
  return client;
}

const callMcp = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  ((await client.callTool({ name, arguments: args })) as { structuredContent?: any }).structuredContent;

describe("a fresh clone of a project set up with init --server", { skip: requirement("git", gitMissing) }, () => {
  let project: UiProject;
  let service: Service;
  let alice: string;
  let teammate: ReturnType<typeof cloned>;

  before(async () => {
    project = await uiProject("sqlite");
    alice = await makeToken(project, ["--agent", "alice"]);
    service = await startService(project);
    teammate = cloned(service.url);
    await teammate.setUp();
  });
  after(async () => {
    await service?.stop();
    await project?.close();
    teammate?.close();
  });

  it("commits .arbeit/service.json (the URL, no token) and .arbeit/.gitignore, nothing else of .arbeit/", () => {
    const tracked = git(teammate.origin, ["ls-files", ".arbeit"]).trim().split("\n").sort();
    assert.deepEqual(tracked, [".arbeit/.gitignore", ".arbeit/service.json"]);
    assert.deepEqual(JSON.parse(readFileSync(join(teammate.clone, ".arbeit", "service.json"), "utf8")), {
      url: service.url,
    });
    assert.ok(!existsSync(join(teammate.origin, ".arbeit", "config.json")));
  });

  it("without a token, every call there answers UNAUTHORIZED naming `arbeit login URL`, and init makes no store", async () => {
    const before = readdirSync(join(teammate.clone, ".arbeit")).sort();
    const listed = await teammate.cli(["query", "ready", "--json"]);
    assert.equal(listed.json?.error.code, "UNAUTHORIZED", listed.stdout + listed.stderr);
    assert.ok(listed.json.error.suggestions.join(" ").includes(`arbeit login ${service.url}`));
    for (const init of [await teammate.cli(["init", "--json"]), await teammate.cli(["call", "arbeit_init", "{}"])]) {
      assert.equal(init.json?.error.code, "ALREADY_INITIALIZED", init.stdout + init.stderr);
      assert.equal(init.json.error.details.cause, "service_project");
      assert.ok(init.json.error.suggestions.join(" ").includes(`arbeit login ${service.url}`));
    }
    const mcp = await mcpIn(teammate.clone, { XDG_CONFIG_HOME: teammate.config });
    try {
      const resumed = await callMcp(mcp, "arbeit_resume");
      assert.equal(resumed.error.code, "UNAUTHORIZED", JSON.stringify(resumed));
      assert.ok(resumed.error.suggestions.join(" ").includes(`arbeit login ${service.url}`));
      const init = await callMcp(mcp, "arbeit_init");
      assert.equal(init.error.code, "ALREADY_INITIALIZED", JSON.stringify(init));
    } finally {
      await mcp.close();
    }
    assert.deepEqual(readdirSync(join(teammate.clone, ".arbeit")).sort(), before);
  });

  it("after `arbeit login URL`, the clone's calls reach the service's store", async () => {
    const login = await teammate.cli(["login", service.url, "--token-stdin", "--json"], { input: `${alice}\n` });
    assert.equal(login.code, 0, login.stdout + login.stderr);
    const made = await teammate.cli(["task", "create", "Made in a fresh clone", "--json"]);
    assert.equal(made.json?.success, true, made.stdout + made.stderr);
    const titles = (await project.cli(["query", "tasks"])).tasks.map((task: { title: string }) => task.title);
    assert.ok(titles.includes("Made in a fresh clone"), titles.join(", "));
    const init = await teammate.cli(["init", "--json"]);
    assert.equal(init.json?.error.code, "ALREADY_INITIALIZED");
    assert.match(init.json.error.suggestions.join(" "), /arbeit_resume/);
  });
});

describe("a checkout set up with init --server by an older Arbeit (.arbeit/config.json only)", () => {
  it("still uses the service, and init --server there writes the committed file and a .gitignore that lets it in", async () => {
    const work = tempDir("arbeit-older-");
    const config = tempDir("arbeit-config-");
    const env = { XDG_CONFIG_HOME: config.dir };
    const url = "http://127.0.0.1:9";
    try {
      mkdirSync(join(work.dir, ".arbeit"));
      writeFileSync(join(work.dir, ".arbeit", "config.json"), JSON.stringify({ store: "service", url }));
      writeFileSync(
        join(work.dir, ".arbeit", ".gitignore"),
        "# Arbeit's store is local to this checkout: do not commit it.\n# Share tasks with `arbeit export` and `arbeit import`, or a shared Postgres store.\n*\n",
      );
      const called = await runCli(["query", "ready", "--json"], { cwd: work.dir, env });
      assert.equal(called.json?.error.code, "UNAUTHORIZED", called.stdout + called.stderr);
      const init = await runCli(["init", "--server", url, "--json"], { cwd: work.dir, env });
      assert.equal(init.code, 0, init.stdout + init.stderr);
      assert.deepEqual(JSON.parse(readFileSync(join(work.dir, ".arbeit", "service.json"), "utf8")), { url });
      assert.match(readFileSync(join(work.dir, ".arbeit", ".gitignore"), "utf8"), /^!service\.json$/m);
      const again = await runCli(["init", "--server", url, "--json"], { cwd: work.dir, env });
      assert.equal(again.json?.error.code, "ALREADY_INITIALIZED", again.stdout + again.stderr);
    } finally {
      work.cleanup();
      config.cleanup();
    }
  });
});

describe("init --server --ca with a file that is no CA", () => {
  it("is INVALID_ARGUMENT naming the file, and writes nothing", async () => {
    const work = tempDir("arbeit-bad-ca-");
    try {
      writeFileSync(join(work.dir, "notes.pem"), "not a certificate\n");
      for (const [file, why] of [
        ["missing.pem", /does not exist/],
        ["notes.pem", /holds no PEM certificate/],
      ] as const) {
        const init = await runCli(["init", "--server", "https://arbeit.example.com", "--ca", file, "--json"], {
          cwd: work.dir,
        });
        assert.equal(init.json?.error.code, "INVALID_ARGUMENT", init.stdout + init.stderr);
        assert.match(init.json.error.message, why);
        assert.ok(init.json.error.message.includes(join(work.dir, file)));
        assert.equal(existsSync(join(work.dir, ".arbeit")), false);
      }
    } finally {
      work.cleanup();
    }
  });
});

describe("a damaged or unsafe .arbeit/service.json", () => {
  const cases: Array<[string, string, RegExp]> = [
    ["not JSON", "{url:", /is not valid JSON/],
    ["no url", '{"ca": "ca.pem"}', /has no "url"/],
    ["a URL with a password", '{"url": "https://me:pw@arbeit.example.com"}', /bad "url"/],
    ["a token", '{"url": "https://arbeit.example.com", "token": "arb_secret"}', /holds "token"/],
    ["an empty ca", '{"url": "https://arbeit.example.com", "ca": ""}', /"ca"/],
  ];
  for (const [what, text, message] of cases)
    it(`holding ${what} is STORE_DAMAGED naming the file, and nothing is sent or made`, async () => {
      const work = tempDir("arbeit-bad-service-");
      try {
        mkdirSync(join(work.dir, ".arbeit"));
        writeFileSync(join(work.dir, ".arbeit", "service.json"), text);
        const listed = await runCli(["query", "ready", "--json"], { cwd: work.dir });
        assert.equal(listed.json?.error.code, "STORE_DAMAGED", listed.stdout + listed.stderr);
        assert.equal(listed.json.error.details.cause, "service_file");
        assert.match(listed.json.error.message, message);
        assert.ok(listed.json.error.message.includes(join(".arbeit", "service.json")));
        assert.ok(!listed.stdout.includes("arb_secret"));
        assert.deepEqual(readdirSync(join(work.dir, ".arbeit")), ["service.json"]);
      } finally {
        work.cleanup();
      }
    });
});

describe("a service whose certificate a private CA signed", {
  skip: requirement("git", gitMissing) || requirement("openssl", opensslMissing),
}, () => {
  let project: UiProject;
  let service: Service;
  let alice: string;
  let files: ReturnType<typeof privateCa>;
  let other: ReturnType<typeof privateCa>;
  let teammate: ReturnType<typeof cloned>;
  const certs = tempDir("arbeit-certs-");

  before(async () => {
    project = await uiProject("sqlite");
    files = privateCa(certs.dir, "company");
    other = privateCa(certs.dir, "other");
    alice = await makeToken(project, ["--agent", "alice"]);
    service = await startService(project, ["--tls-cert", files.cert, "--tls-key", files.key]);
    teammate = cloned(service.url, (origin) => {
      // The organisation's CA, committed with the project, as a team does.
      mkdirSync(join(origin, "certs"));
      copyFileSync(files.ca, join(origin, "certs", "company-ca.pem"));
      return ["--ca", "certs/company-ca.pem"];
    });
    await teammate.setUp();
  });
  after(async () => {
    await service?.stop();
    await project?.close();
    teammate?.close();
    certs.cleanup();
  });

  it("init --server --ca records the CA file relative to the project root", () => {
    assert.deepEqual(JSON.parse(readFileSync(join(teammate.clone, ".arbeit", "service.json"), "utf8")), {
      url: service.url,
      ca: "certs/company-ca.pem",
    });
  });

  it("a fresh clone logs in, calls and reports the service answering with the committed CA, nothing in the environment naming it", async () => {
    // NODE_EXTRA_CA_CERTS, where the environment sets one, names the system's roots, not this CA: it keeps working beside it.
    const login = await teammate.cli(["login", service.url, "--token-stdin", "--json"], { input: `${alice}\n` });
    assert.equal(login.code, 0, login.stdout + login.stderr);
    const made = await teammate.cli(["task", "create", "Over a private CA", "--json"]);
    assert.equal(made.json?.success, true, made.stdout + made.stderr);
    const status = await teammate.cli(["status", "--json"]);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.equal(status.json.reachable, true);
    assert.equal(status.json.store.ca, join(teammate.clone, "certs", "company-ca.pem"));
    const mcp = await mcpIn(teammate.clone, { XDG_CONFIG_HOME: teammate.config });
    try {
      const resumed = await callMcp(mcp, "arbeit_resume");
      assert.equal(resumed.success, true, JSON.stringify(resumed));
    } finally {
      await mcp.close();
    }
    // A Claude Code hook in the clone: its step runs on the service, whose briefing names the task.
    const briefing = await runHook(
      "session-start",
      hookPayload(teammate.clone, "clone-session", "SessionStart", { source: "startup" }),
      teammate.clone,
      { XDG_CONFIG_HOME: teammate.config },
    );
    assert.equal(briefing.code, 0, briefing.stderr);
    assert.equal(briefing.stderr, "");
    assert.match(briefing.stdout, /Over a private CA/);
  });

  it("a certificate that names another host is said as such", async () => {
    const elsewhere = privateCa(certs.dir, "elsewhere", "DNS:arbeit.elsewhere.example");
    const misnamed = await startService(project, ["--tls-cert", elsewhere.cert, "--tls-key", elsewhere.key]);
    const work = tempDir("arbeit-misnamed-");
    try {
      const env = { ARBEIT_TOKEN: alice, ARBEIT_URL: misnamed.url };
      mkdirSync(join(work.dir, ".arbeit"));
      writeFileSync(join(work.dir, ".arbeit", "service.json"), JSON.stringify({ url: misnamed.url, ca: elsewhere.ca }));
      const called = await runCli(["query", "ready", "--json"], { cwd: work.dir, env });
      assert.equal(called.json?.error.details.problem, "wrong_name", called.stdout + called.stderr);
      assert.match(called.json.error.message, /certificate does not name 127\.0\.0\.1/);
      const status = await runCli(["status", "--json"], { cwd: work.dir, env });
      assert.equal(status.json?.certificate, "wrong_name", status.stdout);
    } finally {
      work.cleanup();
      await misnamed.stop();
    }
  });

  it("a checkout that trusts no CA for it says the service's certificate is not trusted, not that it is unreachable", async () => {
    const bare = tempDir("arbeit-no-ca-");
    const config = tempDir("arbeit-config-");
    const env = { XDG_CONFIG_HOME: config.dir, ARBEIT_TOKEN: alice };
    try {
      assert.equal((await runCli(["init", "--server", service.url, "--json"], { cwd: bare.dir, env })).code, 0);
      const called = await runCli(["query", "ready", "--json"], { cwd: bare.dir, env });
      assert.equal(called.json?.error.code, "STORE_UNAVAILABLE", called.stdout + called.stderr);
      assert.equal(called.json.error.details.cause, "service_certificate");
      assert.match(called.json.error.message, /certificate is not trusted/);
      assert.doesNotMatch(called.json.error.message, /could not be reached/);
      assert.match(called.json.error.suggestions.join(" "), /--ca/);
      const status = await runCli(["status", "--json"], { cwd: bare.dir, env });
      assert.equal(status.code, 1);
      assert.equal(status.json.certificate, "untrusted");
      assert.match(status.json.attention[0].message, /certificate is not trusted/);
      const login = await runCli(["login", service.url, "--token-stdin", "--json"], {
        cwd: bare.dir,
        env: { XDG_CONFIG_HOME: config.dir },
        input: `${alice}\n`,
      });
      assert.equal(login.json?.error.details.cause, "service_certificate", login.stdout + login.stderr);
      // The wrong authority is named as such.
      const wrong = await runCli(["login", service.url, "--token-stdin", "--ca", other.ca, "--json"], {
        cwd: bare.dir,
        env: { XDG_CONFIG_HOME: config.dir },
        input: `${alice}\n`,
      });
      assert.equal(wrong.json?.error.details.cause, "service_certificate", wrong.stdout + wrong.stderr);
      assert.ok(wrong.json.error.message.includes(other.ca));
      assert.ok(!existsSync(join(config.dir, "arbeit", "credentials.json")));
      // `arbeit login URL --ca FILE` records the CA for the user's own use: later calls trust it.
      const login2 = await runCli(["login", service.url, "--token-stdin", "--ca", files.ca, "--json"], {
        cwd: bare.dir,
        env: { XDG_CONFIG_HOME: config.dir },
        input: `${alice}\n`,
      });
      assert.equal(login2.code, 0, login2.stdout + login2.stderr);
      const after = await runCli(["query", "ready", "--json"], { cwd: bare.dir, env: { XDG_CONFIG_HOME: config.dir } });
      assert.equal(after.json?.success, true, after.stdout + after.stderr);
    } finally {
      bare.cleanup();
      config.cleanup();
    }
  });
});
