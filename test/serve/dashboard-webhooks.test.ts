import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { startWebhookDelivery } from "../../src/notify/webhooks.js";
import { openProject } from "../../src/service/project.js";
import type { SqlStore } from "../../src/store/sql/database.js";
import { chromiumSkip, launchChromium, type UiProject, uiProject } from "../ui/harness.js";
import { makeToken, type Service, signIn, startService } from "./harness.js";

/**
 * A webhook's URL is often a secret itself (Slack's and ntfy's carry their key in the path). The
 * dashboard names a failing webhook by its origin alone, to a read-only person in Chromium and to
 * any token asking /api/home; `arbeit notify list`, on the store, shows it whole.
 */

/** A port on 127.0.0.1 that nothing listens on: a delivery there fails at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("a failing webhook on the dashboard of arbeit serve, in Chromium", { skip: chromiumSkip() }, () => {
  const KEY_PATH = "/services/T0AAA/B0BBB/s3cretWebhookKey";
  let project: UiProject;
  let service: Service;
  let browser: Browser;
  let origin: string;

  before(async () => {
    project = await uiProject("sqlite");
    origin = `http://127.0.0.1:${await closedPort()}`;
    await project.cli(["notify", "add", `${origin}${KEY_PATH}`, "--allow-private"]);
    const task = (await project.cli(["task", "create", "--title", "Pick a license"])).task.id;
    await project.cli(["context", "add", task, "blocker", "MIT or Apache?"]);
    // Delivered here with short waits between tries, so that its failure is recorded at once.
    const local = await openProject({ cwd: project.dir });
    const stop = startWebhookDelivery(local.store as unknown as SqlStore, { pollMs: 20, retryBaseMs: 5 });
    try {
      for (let i = 0; i < 200; i++) {
        const [webhook] = (await project.cli(["notify", "list"])).webhooks;
        if (webhook.last_failure) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await stop();
      await local.close();
    }
    const [webhook] = (await project.cli(["notify", "list"])).webhooks;
    assert.match(webhook.last_failure, new RegExp(KEY_PATH), "arbeit notify list shows the failure with the URL");
    service = await startService(project);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    await project?.close();
  });

  it("shows a read-only person the failing webhook by its origin, and nowhere its path", async () => {
    const reader = await makeToken(project, ["--person", "rita", "--read-only"]);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signIn(page, service, reader, "/");
      const item = page.locator('[data-view="home"] [data-webhook-id]');
      await item.waitFor();
      const shown = (await item.textContent()) ?? "";
      assert.match(shown, new RegExp(`${origin}/…`));
      assert.ok(!(await page.content()).includes("s3cretWebhookKey"), shown);
    } finally {
      await context.close();
    }
  });

  it("gives no token the path through /api/home", async () => {
    for (const args of [
      ["--person", "dana"],
      ["--agent", "ci-bot", "--read-only"],
      ["--agent", "builder"],
    ]) {
      const token = await makeToken(project, args);
      const response = await fetch(`${service.url}/api/home`, { headers: { Authorization: `Bearer ${token}` } });
      const text = await response.text();
      if (response.status !== 200) continue; // a token the dashboard refuses sees nothing at all
      assert.ok(text.includes(`${origin}/…`), text);
      assert.ok(!text.includes("s3cretWebhookKey"), `${args.join(" ")}: ${text}`);
    }
  });
});
