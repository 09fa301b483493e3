import assert from "node:assert/strict";
import { createHmac, timingSafeEqual } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { listWebhooks, SIGNATURE_TOLERANCE_S, startWebhookDelivery, verifyWebhook } from "../../src/notify/webhooks.js";
import { readHome } from "../../src/service/home.js";
import { openProject } from "../../src/service/project.js";
import type { SqlStore } from "../../src/store/sql/database.js";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { type Dashboard, type Engine, startDashboard, type UiProject, uiProject } from "../ui/harness.js";
import { receiver } from "./receiver.js";

/**
 * Outgoing webhooks: a real HTTP receiver in the test, `arbeit notify` and `arbeit ui` as a person
 * runs them, agents as other CLI processes. A delivery verifies under the secret shown once; an
 * altered or replayed one does not; a receiver that is down gets retries, and agents never wait.
 */

function notifySuite(engine: Engine) {
  let project: UiProject;
  let dashboard: Dashboard;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let secret: string;
  let task: string;
  const call = (tool: string, args: unknown) =>
    project.cli(["call", tool, "-", "--session", "ses-hooked", "--agent", "claude-code"], JSON.stringify(args));

  before(async () => {
    project = await uiProject(engine);
    hook = await receiver();
    task = (await project.cli(["task", "create", "--title", "Pick the currency"])).task.id;
    const added = await project.cli([
      "notify",
      "add",
      hook.url,
      "--allow-private",
      "--events",
      "question,task_completed",
    ]);
    secret = added.secret;
    dashboard = await startDashboard(project.dir, { env: project.env });
  });
  after(async () => {
    await dashboard?.stop();
    await hook?.close();
    await project?.close();
  });

  it("delivers a question, signed: it verifies under the secret; altered or replayed, it does not", async () => {
    await call("arbeit_context_add", { task_id: task, type: "note", content: "Not a kind it hears of" });
    await call("arbeit_context_add", { task_id: task, type: "blocker", content: "Euros or dollars?" });
    await hook.until(1);
    const [delivery] = hook.received;
    const body = JSON.parse(delivery!.body);
    assert.equal(body.kind, "question");
    assert.equal(body.text, `claude-code asks on "Pick the currency" (${task}): Euros or dollars?`);
    assert.deepEqual(body.task, { id: task, title: "Pick the currency" });
    assert.equal(body.event.session_id, "ses-hooked");

    const signature = delivery!.headers["x-arbeit-signature"] as string;
    const sentAt = Number(/^t=(\d+),/.exec(signature)?.[1]);
    assert.equal(verifyWebhook(secret, signature, delivery!.body, sentAt), true);
    assert.equal(verifyWebhook(secret, signature, delivery!.body.replace("Euros", "Pesos"), sentAt), false);
    assert.equal(verifyWebhook("whsec_someone-else", signature, delivery!.body, sentAt), false);
    // The same request sent again later than the tolerance: refused as a replay.
    assert.equal(verifyWebhook(secret, signature, delivery!.body, sentAt + SIGNATURE_TOLERANCE_S + 1), false);
    assert.equal(verifyWebhook(secret, undefined, delivery!.body, sentAt), false);
    assert.match(delivery!.headers["x-arbeit-delivery"] as string, /^whk-[a-z0-9]{8}:\d+$/);

    await project.cli(["task", "update", task, "--status", "completed"]);
    await hook.until(2);
    assert.equal(JSON.parse(hook.received[1]!.body).kind, "task_completed");
    assert.equal(hook.received.length, 2, "the note was not sent");

    const [listed] = (await project.cli(["notify", "list"])).webhooks;
    assert.equal(listed.url, hook.url);
    assert.deepEqual(listed.events, ["question", "task_completed"]);
    assert.ok(listed.last_success_at);
    assert.equal(listed.secret, undefined, "a secret is shown once, never listed");
  });

  it("signs each delivery as docs/dashboard.md tells a receiver to check it: HMAC-SHA256 of `<t>.<body>`, so another t does not verify", async () => {
    const own = await receiver();
    try {
      const { secret } = await project.cli(["notify", "add", own.url, "--allow-private", "--events", "question"]);
      const held = (await project.cli(["task", "create", "--title", "Pick the rounding"])).task.id;
      await call("arbeit_context_add", { task_id: held, type: "blocker", content: "Half up or half even?" });
      await own.until(1);
      const { headers, body } = own.received[0]!;
      const header = headers["x-arbeit-signature"] as string;
      const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) ?? [];
      assert.ok(t && v1, `the header reads t=<unix seconds>,v1=<hex>: ${header}`);
      assert.ok(Math.abs(Date.now() / 1000 - Number(t)) < 60, "t is the time it was sent");
      assert.equal(receiverAccepts(secret, body, t, v1), true, "a receiver built from the docs accepts it");
      // Replayed with a fresh timestamp so that it looks recent: the MAC covers t, so it fails.
      const replayedAt = String(Number(t) + 120);
      assert.equal(receiverAccepts(secret, body, replayedAt, v1), false, "the same MAC under another t is refused");
      assert.equal(verifyWebhook(secret, `t=${replayedAt},v1=${v1}`, body, Number(replayedAt)), false);
    } finally {
      await own.close();
    }
  });

  it("tells of a claim gone stale while nobody calls: the deliverer frees the lease that ran out", async () => {
    const stale = await receiver();
    try {
      await project.cli(["notify", "add", stale.url, "--allow-private", "--events", "stale_claim"]);
      const held = (await project.cli(["task", "create", "--title", "Reconcile the ledger"])).task.id;
      const claimed = await call("arbeit_task_claim", { task_id: held, lease_seconds: 1 });
      assert.equal(claimed.claimed, true);
      // No agent calls again: only the deliverer can notice the lease ran out.
      await stale.until(1);
      const body = JSON.parse(stale.received[0]!.body);
      assert.equal(body.kind, "stale_claim");
      assert.deepEqual(body.task, { id: held, title: "Reconcile the ledger" });
      assert.equal(body.event.payload.session, "ses-hooked");
      const task = (await project.cli(["task", "get", held])).task;
      assert.equal(task.lease_expires_at, null, "the lease is freed, as the next claim would free it");
      assert.equal(stale.received.length, 1);
    } finally {
      await stale.close();
    }
  });
}

/** The check docs/dashboard.md describes, written from its words alone (not with Arbeit's helper). */
function receiverAccepts(secret: string, body: string, t: string, v1: string): boolean {
  const expected = createHmac("sha256", secret).update(`${t}.${body}`, "utf8").digest();
  const given = Buffer.from(v1, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe("webhooks delivered by arbeit ui, on SQLite", () => notifySuite("sqlite"));
describe("webhooks delivered by arbeit ui, on Postgres", { skip: await postgresSkip() }, () => notifySuite("postgres"));

describe("webhook delivery", () => {
  let project: UiProject;
  before(async () => {
    project = await uiProject("sqlite");
  });
  after(async () => project?.close());

  it("retries a receiver that is down with growing waits, then records the failure for arbeit notify list", async () => {
    const flaky = await receiver((index) => (index < 2 ? 503 : 200));
    const down = await receiver(() => 503);
    const service = await openProject({ cwd: project.dir });
    const stop = startWebhookDelivery(service.store as unknown as SqlStore, { pollMs: 20, retryBaseMs: 40 });
    try {
      await project.cli(["notify", "add", flaky.url, "--allow-private"]);
      await project.cli(["notify", "add", down.url, "--allow-private"]);
      const task = (await project.cli(["task", "create", "--title", "Ship it"])).task.id;
      await project.cli(["context", "add", task, "blocker", "Today?"]);
      await flaky.until(3);
      await down.until(5);
      // The same delivery each time, after waits that grow.
      assert.equal(new Set(flaky.received.map((r) => r.headers["x-arbeit-delivery"])).size, 1);
      const gaps = down.received.slice(1).map((r, i) => r.at - down.received[i]!.at);
      assert.ok(gaps.at(-1)! > gaps[0]!, `waits grow: ${gaps}`);
      for (let i = 0; i < 100; i++) {
        const failed = (await listWebhooks(service.store as unknown as SqlStore)).find((w) => w.url === down.url);
        if (failed?.last_failure) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const webhooks = await listWebhooks(service.store as unknown as SqlStore);
      const ok = webhooks.find((w) => w.url === flaky.url)!;
      assert.ok(ok.last_success_at);
      assert.equal(ok.last_failure, null);
      const listed = (await project.cli(["notify", "list"])).webhooks.find((w: { url: string }) => w.url === down.url);
      assert.equal(listed.last_failure, `HTTP 503 from ${down.url} (after 5 tries)`);
      assert.ok(listed.last_failure_at);
      // `arbeit status` needs a person for it (exit 1), and so does the dashboard's home view;
      // the webhook that recovered, neither.
      const status = await runCli(["status", "--json"], { cwd: project.dir });
      assert.equal(status.code, 1);
      const flagged = status.json.attention.filter((item: { code: string }) => item.code === "WEBHOOK_FAILING");
      assert.equal(flagged.length, 1);
      assert.match(flagged[0].message, new RegExp(`${down.url}.*HTTP 503`));
      // The home view names it by its origin: the whole URL is often a secret (Slack's, ntfy's).
      const failing = (await readHome(service.store)).attention.webhooks;
      const shown = `${new URL(down.url).origin}/…`;
      assert.deepEqual(
        failing.map((webhook) => [webhook.url, webhook.last_failure]),
        [[shown, `HTTP 503 from ${shown} (after 5 tries)`]],
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(down.received.length, 5, "no more tries after the last");
    } finally {
      await stop();
      await flaky.close();
      await down.close();
      await service.close();
    }
  });

  it("sends each event once when two processes deliver for the same store", async () => {
    const hook = await receiver();
    const { webhook } = await project.cli(["notify", "add", hook.url, "--allow-private"]);
    const task = (await project.cli(["task", "create", "--title", "Twice?"])).task.id;
    for (const question of ["One?", "Two?", "Three?"]) await project.cli(["context", "add", task, "blocker", question]);
    // Both start with the same events waiting after the same cursor.
    const services = [await openProject({ cwd: project.dir }), await openProject({ cwd: project.dir })];
    const stops = services.map((service) =>
      startWebhookDelivery(service.store as unknown as SqlStore, { pollMs: 5, retryBaseMs: 40 }),
    );
    try {
      await hook.until(3);
      // Both keep looking for a while after the last: neither sends any event again.
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      // Each exactly once; two deliverers may each send one at the same time, so not in order.
      assert.deepEqual(hook.received.map((r) => JSON.parse(r.body).event.payload.content).sort(), [
        "One?",
        "Three?",
        "Two?",
      ]);
      await project.cli(["notify", "remove", webhook.id]);
    } finally {
      for (const stop of stops) await stop();
      await hook.close();
      for (const service of services) await service.close();
    }
  });

  it("never holds up an agent: its calls finish while a receiver holds a delivery open", async () => {
    const stuck = await receiver(() => "hold");
    const service = await openProject({ cwd: project.dir });
    const stop = startWebhookDelivery(service.store as unknown as SqlStore, { pollMs: 20, retryBaseMs: 40 });
    try {
      const { webhook } = await project.cli(["notify", "add", stuck.url, "--allow-private"]);
      const task = (await project.cli(["task", "create", "--title", "Stuck receiver"])).task.id;
      await project.cli(["context", "add", task, "blocker", "Anyone there?"]);
      await stuck.until(1);
      assert.equal(stuck.held.length, 1, "the receiver holds the delivery open");
      // Agents go on: their calls write to the store and return, the delivery still open.
      await project.cli(["context", "add", task, "blocker", "Still there?"]);
      await project.cli(["task", "update", task, "--status", "in_progress"]);
      assert.equal(stuck.held.length, 1);
      assert.equal(stuck.received.length, 1, "the second question waits its turn behind the first");
      await project.cli(["notify", "remove", webhook.id]);
    } finally {
      await stop();
      await stuck.close();
      await service.close();
    }
  });
});

describe("webhook delivery with no webhook", () => {
  let project: UiProject;
  before(async () => {
    project = await uiProject("sqlite");
  });
  after(async () => project?.close());

  it("asks the store for webhooks less and less often while there is none, and delivers once one is added", async () => {
    const hook = await receiver();
    const service = await openProject({ cwd: project.dir });
    const real = service.store as unknown as SqlStore;
    let looks = 0;
    const counted: SqlStore = {
      dialect: real.dialect,
      location: real.location,
      transaction: (mode, fn) => {
        looks++;
        return real.transaction(mode, fn);
      },
    };
    const stop = startWebhookDelivery(counted, { pollMs: 10, idleMs: 200, retryBaseMs: 40 });
    try {
      // A look every 10 ms would be about 100 in this second; backing off to 200 ms, under 15.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.ok(looks < 40, `${looks} looks in a second with no webhook`);
      await project.cli(["notify", "add", hook.url, "--allow-private"]);
      const task = (await project.cli(["task", "create", "--title", "Found later"])).task.id;
      await project.cli(["context", "add", task, "blocker", "Anyone?"]);
      await hook.until(1);
      assert.equal(JSON.parse(hook.received[0]!.body).event.payload.content, "Anyone?");
    } finally {
      await stop();
      await hook.close();
      await service.close();
    }
  });
});
