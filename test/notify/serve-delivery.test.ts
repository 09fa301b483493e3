import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { verifyWebhook } from "../../src/notify/webhooks.js";
import { type RunningService, startService as startServiceHere } from "../../src/serve/server.js";
import { openProject } from "../../src/service/project.js";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { apiCall, makeToken, type Service, startService } from "../serve/harness.js";
import { type Dashboard, type Engine, startDashboard, type UiProject, uiProject } from "../ui/harness.js";
import { receiver } from "./receiver.js";

/**
 * Webhooks of a project that `arbeit serve` serves go out from the service's own process: agents
 * call the service over HTTP, a real receiver on 127.0.0.1 gets signed deliveries, an `arbeit ui`
 * on the same store never makes a second delivery of an event, and a failing receiver shows in
 * `arbeit status` and on the dashboard's home view while agents' calls go on unhindered.
 */

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function serveSuite(engine: Engine) {
  let project: UiProject;
  let service: Service;
  let dashboard: Dashboard | undefined;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let secret: string;
  let agent: string;
  let task: string;
  const ask = async (content: string) => {
    const answer = await apiCall(service, agent, {
      tool: "arbeit_context_add",
      args: { task_id: task, type: "blocker", content },
      session: "ses-remote",
    });
    assert.equal(answer.body.success, true, JSON.stringify(answer.body));
  };
  const contents = () => hook.received.map((r) => JSON.parse(r.body).event.payload.content as string);

  before(async () => {
    project = await uiProject(engine);
    hook = await receiver();
    task = (await project.cli(["task", "create", "--title", "Pick the currency"])).task.id;
    secret = (await project.cli(["notify", "add", hook.url, "--allow-private", "--events", "question"])).secret;
    agent = await makeToken(project, ["--agent", "remote-agent"]);
    service = await startService(project);
  });
  after(async () => {
    await dashboard?.stop();
    await service?.stop();
    await hook?.close();
    await project?.close();
  });

  it("delivers from the service's process, signed, a question an agent filed over HTTP", async () => {
    await ask("Euros or dollars?");
    await hook.until(1);
    const [delivery] = hook.received;
    const body = JSON.parse(delivery!.body);
    assert.equal(body.kind, "question");
    assert.equal(body.text, `remote-agent asks on "Pick the currency" (${task}): Euros or dollars?`);
    assert.equal(body.event.session_id, "ses-remote");
    const signature = delivery!.headers["x-arbeit-signature"] as string;
    assert.equal(verifyWebhook(secret, signature, delivery!.body), true);
    assert.equal(verifyWebhook(secret, signature, delivery!.body.replace("Euros", "Pesos")), false);
  });

  it("sends each event once while arbeit ui runs on the same store too", async () => {
    dashboard = await startDashboard(project.dir, { env: project.env });
    const questions = ["One?", "Two?", "Three?", "Four?"];
    for (const question of questions) await ask(question);
    await hook.until(1 + questions.length);
    // Both deliverers keep looking for a while after the last event: neither sends one again.
    await pause(1500);
    assert.deepEqual(contents().slice(1).sort(), [...questions].sort());
    const ids = hook.received.map((r) => r.headers["x-arbeit-delivery"]);
    assert.equal(new Set(ids).size, ids.length, `one delivery per event: ${ids}`);
    await dashboard.stop();
    dashboard = undefined;
    // With arbeit ui gone, the service still delivers.
    await ask("Five?");
    await hook.until(6);
    assert.equal(contents().at(-1), "Five?");
  });
}

describe("webhooks delivered by arbeit serve, on SQLite", () => serveSuite("sqlite"));
describe("webhooks delivered by arbeit serve, on Postgres", { skip: await postgresSkip() }, () =>
  serveSuite("postgres"),
);

/** The service in this process (the same startService `arbeit serve` runs), with a quick back-off. */
function failureSuite(engine: Engine) {
  let project: UiProject;
  let running: RunningService;
  let closeStore: () => Promise<void>;

  before(async () => {
    project = await uiProject(engine);
    const opened = await openProject({
      cwd: project.dir,
      databaseUrl: project.env.ARBEIT_DATABASE_URL,
      databaseSchema: project.env.ARBEIT_DATABASE_SCHEMA,
    });
    closeStore = () => opened.close();
    running = await startServiceHere({
      service: opened,
      cwd: project.dir,
      db: undefined,
      host: "127.0.0.1",
      port: 0,
      version: "test",
      log: () => {},
      webhooks: { pollMs: 20, retryBaseMs: 40 },
    });
  });
  after(async () => {
    await running?.close();
    await closeStore?.();
    await project?.close();
  });

  it("never holds up an agent's call, retries a receiver that is down, and shows the failure", async () => {
    const stuck = await receiver(() => "hold");
    const down = await receiver(() => 503);
    const service = { url: running.url } as Service;
    try {
      const agent = await makeToken(project, ["--agent", "remote-agent"]);
      const person = await makeToken(project, ["--person", "pat"]);
      const stuckHook = (await project.cli(["notify", "add", stuck.url, "--allow-private"])).webhook;
      await project.cli(["notify", "add", down.url, "--allow-private"]);
      const task = (await project.cli(["task", "create", "--title", "Ship it"])).task.id;
      const ask = (content: string) =>
        apiCall(service, agent, {
          tool: "arbeit_context_add",
          args: { task_id: task, type: "blocker", content },
          session: "ses-remote",
        });
      assert.equal((await ask("Today?")).body.success, true);
      await stuck.until(1);
      // The receiver holds the delivery open; the agent's next calls answer all the same.
      assert.equal((await ask("Tomorrow?")).body.success, true);
      const update = await apiCall(service, agent, {
        tool: "arbeit_task_update",
        args: { task_id: task, status: "in_progress" },
        session: "ses-remote",
      });
      assert.equal(update.body.success, true, JSON.stringify(update.body));
      assert.equal(stuck.held.length, 1, "the delivery is still open");

      // Five tries of each question, the same delivery each time, then the failure is recorded.
      await down.until(10);
      assert.equal(new Set(down.received.slice(0, 5).map((r) => r.headers["x-arbeit-delivery"])).size, 1);
      let status = await runCli(["status", "--json"], { cwd: project.dir, env: project.env });
      for (let i = 0; i < 100 && !JSON.stringify(status.json?.attention ?? []).includes("WEBHOOK_FAILING"); i++) {
        await pause(50);
        status = await runCli(["status", "--json"], { cwd: project.dir, env: project.env });
      }
      assert.equal(status.code, 1);
      const flagged = status.json.attention.filter((item: { code: string }) => item.code === "WEBHOOK_FAILING");
      assert.equal(flagged.length, 1, JSON.stringify(status.json.attention));
      assert.match(flagged[0].message, new RegExp(`${down.url}.*HTTP 503`));
      // The dashboard the service serves says so too, on its home view, naming the receiver by its
      // URL's origin alone: the path may hold the receiver's key, and any token may read the view.
      const home = await fetch(`${running.url}/api/home`, { headers: { Authorization: `Bearer ${person}` } });
      const homeText = await home.text();
      const failing = JSON.parse(homeText).data.attention.webhooks as Array<{ url: string; last_failure: string }>;
      const shown = `${new URL(down.url).origin}/…`;
      assert.deepEqual(
        failing.map((webhook) => [webhook.url, webhook.last_failure]),
        [[shown, `HTTP 503 from ${shown} (after 5 tries)`]],
      );
      assert.ok(!homeText.includes(new URL(down.url).pathname), "the receiver's path is not shown");
      await project.cli(["notify", "remove", stuckHook.id]);
    } finally {
      await stuck.close();
      await down.close();
    }
  });
}

describe("arbeit serve's webhook failures, on SQLite", () => failureSuite("sqlite"));
describe("arbeit serve's webhook failures, on Postgres", { skip: await postgresSkip() }, () =>
  failureSuite("postgres"),
);
