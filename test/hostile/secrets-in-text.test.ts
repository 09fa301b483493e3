import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hookPayload, runHook } from "../claude/hook-input.js";
import { runCli } from "../helpers/cli.js";
import { apiCall, makeToken, mcpClient, type Service, startService } from "../serve/harness.js";
import { startDashboard, type UiProject, uiProject } from "../ui/harness.js";
import { forEachEngine, type HostileProject } from "./engines.js";
import { rawSql } from "./raw-sql.js";

/**
 * A live secret of Arbeit's typed where it does not belong (a prompt, a failed command, a title,
 * a note, a memory value) is never stored: every token can read the event log and the tasks
 * back. It is kept as `arb_[redacted]` / `whsec_[redacted]`, and the call that carried it is told
 * with a SECRET_REDACTED warning. Driven through the CLI and Claude Code's hooks, on both engines.
 */

/** The store's whole content, as `arbeit export` writes it: one JSON line per row. */
async function exported(project: HostileProject): Promise<string[]> {
  const result = await project.cli(["export"]);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim().split("\n");
}

forEachEngine("Arbeit's own secrets typed into text", (project) => {
  it("are cut out of prompts, failed commands, titles, notes and memory before they are stored", async () => {
    const p = await project();
    const token = (await p.cli(["token", "create", "--agent", "ci-bot"])).json.data.secret as string;
    const signing = (await p.cli(["notify", "add", "https://hooks.example.com/arbeit"])).json.data.secret as string;
    assert.match(token, /^arb_[A-Za-z0-9_-]{43}$/);
    assert.match(signing, /^whsec_[A-Za-z0-9_-]{43}$/);
    const session = "ses-leaky";
    const as = ["--session", session, "--agent", "claude-code"];

    const created = await p.cli(["task", "create", "--title", `Rotate ${token} today`, ...as]);
    assert.equal(created.code, 0, created.stdout);
    const task = created.json.data.task;
    assert.equal(task.title, "Rotate arb_[redacted] today");
    assert.deepEqual(
      created.json.warnings.map((w: { code: string }) => w.code),
      ["SECRET_REDACTED"],
    );
    await p.cli(["call", "arbeit_task_start_work", JSON.stringify({ task_id: task.id }), ...as]);

    const note = await p.cli([
      "call",
      "arbeit_context_add",
      JSON.stringify({ task_id: task.id, type: "note", content: `The receiver checks with ${signing}.` }),
      ...as,
    ]);
    assert.equal(note.json.data.entry.content, "The receiver checks with whsec_[redacted].");
    const memory = await p.cli([
      "call",
      "arbeit_memory",
      JSON.stringify({ action: "set", scope: "project", key: "deploy", value: { env: { ARBEIT_TOKEN: token } } }),
      ...as,
    ]);
    assert.equal(memory.code, 0, memory.stdout);
    assert.equal(memory.json.warnings[0].code, "SECRET_REDACTED");

    const env = p.env;
    const prompt = await runHook(
      "user-prompt-submit",
      hookPayload(p.dir, session, "UserPromptSubmit", { prompt: `Deploy with ARBEIT_TOKEN=${token} please` }),
      p.dir,
      env,
    );
    assert.equal(prompt.code, 0, prompt.stderr);
    const failure = await runHook(
      "post-tool-use-failure",
      hookPayload(p.dir, session, "PostToolUseFailure", {
        tool_name: "Bash",
        tool_input: { command: `curl -H "Authorization: Bearer ${token}" https://ci.example.com/deploy` },
        error: `401: token ${token} refused`,
      }),
      p.dir,
      env,
    );
    assert.equal(failure.code, 0, failure.stderr);

    const lines = await exported(p);
    // Recorded they were: the prompt and the failed command are in the log, without the secret.
    const events = lines.filter((line) => line.includes('"table":"events"'));
    assert.ok(
      events.some((line) => line.includes("Deploy with ARBEIT_TOKEN=arb_[redacted] please")),
      "the prompt is logged",
    );
    assert.ok(
      events.some((line) => line.includes("Authorization: Bearer arb_[redacted]")),
      "the failed command is logged",
    );
    const memoryValue = (
      await p.cli(["call", "arbeit_memory", JSON.stringify({ action: "get", scope: "project", key: "deploy" })])
    ).json.data;
    assert.match(JSON.stringify(memoryValue), /"ARBEIT_TOKEN":"arb_\[redacted\]"/);
    assert.deepEqual(
      lines.filter((line) => line.includes(token)),
      [],
      "the token is nowhere in the store",
    );
    assert.deepEqual(
      lines.filter((line) => line.includes(signing) && !line.startsWith('{"table":"webhooks"')),
      [],
      "the signing secret is in its webhook's row only",
    );
  });

  it("refuses a caller name that holds one: names are stored with every row, and cannot be cut", async () => {
    const p = await project();
    const token = (await p.cli(["token", "create", "--agent", "ci-bot"])).json.data.secret as string;
    for (const flag of ["--session", "--agent"]) {
      const result = await p.cli(["task", "create", "--title", "Named badly", flag, token]);
      assert.equal(result.code, 2, "a usage error");
      assert.match(result.stderr, new RegExp(`${flag} must not hold a secret`));
      assert.ok(!(result.stdout + result.stderr).includes(token), "the refusal does not repeat the secret");
    }
    // The same rule where the name comes in without the CLI's flags: a hook's session id.
    const hooked = await runHook(
      "user-prompt-submit",
      hookPayload(p.dir, token, "UserPromptSubmit", { prompt: "Named badly" }),
      p.dir,
      p.env,
    );
    assert.equal(hooked.code, 0, "a hook never blocks its host");
    assert.ok(!(hooked.stdout + hooked.stderr).includes(token), hooked.stderr);
    const lines = await exported(p);
    assert.deepEqual(
      lines.filter((line) => line.includes("Named badly")),
      [],
      "nothing was written",
    );
  });

  it("knows the token arbeit ui prints, pasted from its URL", async () => {
    const p = await project();
    const dashboard = await startDashboard(p.dir, { env: p.env });
    try {
      const token = new URL(dashboard.url).hash.replace("#token=", "");
      const created = await p.cli(["task", "create", "--title", `Open ${dashboard.url}`]);
      assert.equal(created.json.data.task.title, `Open ${dashboard.url.replace(token, "arbui_[redacted]")}`);
      assert.equal(created.json.warnings[0].code, "SECRET_REDACTED");
    } finally {
      await dashboard.stop();
    }
  });

  it("leaves alone text that only looks like one: a short arb_ name, a snake_case identifier", async () => {
    const p = await project();
    const title = "Rename arb_config and arb_compute_the_weekly_totals_for_every_customer_account";
    const created = await p.cli(["task", "create", "--title", title]);
    assert.equal(created.json.data.task.title, title);
    assert.equal(created.json.warnings, undefined);
  });
});

forEachEngine("arbeit doctor and secrets stored before they were kept out", (project) => {
  it("names each row whose text holds one, but not the secret, and fails", async () => {
    const p = await project();
    const token = (await p.cli(["token", "create", "--agent", "ci-bot"])).json.data.secret as string;
    await p.cli(["notify", "add", "https://hooks.example.com/arbeit"]);
    const task = (await p.cli(["task", "create", "--title", "Ship it"])).json.data.task.id;
    const clean = await p.cli(["doctor"]);
    assert.equal(clean.code, 0, "a webhook's own signing secret is where it belongs");
    assert.equal(clean.json.checks.find((c: { name: string }) => c.name === "stored_secrets").total, 0);

    // As an older version stored a pasted token: in the task's description and its event.
    await rawSql(p, `UPDATE tasks SET description = 'deploy with ${token}' WHERE id = '${task}'`);
    const report = await p.cli(["doctor"]);
    assert.equal(report.code, 1);
    const check = report.json.checks.find((c: { name: string }) => c.name === "stored_secrets");
    assert.equal(check.ok, false);
    assert.deepEqual(
      check.findings.map((f: { table: string; column: string; id: string }) => [f.table, f.column, f.id]),
      [["tasks", "description", task]],
    );
    assert.ok(!report.stdout.includes(token), "the report does not repeat the secret");
  });
});

describe("a secret sent to arbeit serve, over the tool-call endpoint and MCP over HTTP", () => {
  let project: UiProject;
  let service: Service;
  let agent: string;
  before(async () => {
    project = await uiProject("sqlite");
    agent = await makeToken(project, ["--agent", "builder"]);
    service = await startService(project);
  });
  after(async () => {
    await service?.stop();
    await project?.close();
  });

  it("is stored redacted, whichever way it came in", async () => {
    const viaCall = await apiCall(service, agent, {
      tool: "arbeit_task_create",
      args: { title: `Rotate ${agent}` },
    });
    assert.equal(viaCall.body.data.task.title, "Rotate arb_[redacted]");
    assert.equal(viaCall.body.warnings[0].code, "SECRET_REDACTED");
    const client = await mcpClient(service, agent);
    try {
      const viaMcp = await client.call("arbeit_context_add", {
        task_id: viaCall.body.data.task.id,
        type: "note",
        content: `ARBEIT_TOKEN=${agent}`,
      });
      assert.equal(viaMcp.data.entry.content, "ARBEIT_TOKEN=arb_[redacted]");
    } finally {
      await client.close();
    }
    const exported = await runCli(["export"], { cwd: project.dir, env: project.env });
    assert.ok(!exported.stdout.includes(agent), "the token is nowhere in the store");
  });
});
