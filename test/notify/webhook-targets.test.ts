import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * Where `arbeit notify add` lets a webhook deliver. Deliveries are POSTs from the machine that
 * runs the dashboard or the service, inside its network: a target on that machine or a private
 * network is refused (WEBHOOK_TARGET_REFUSED) unless a person passes --allow-private, and a URL
 * with user:pass is refused always (no delivery could send it). A refusal adds nothing.
 */
describe("arbeit notify add: where a webhook may deliver", () => {
  let dir: string;
  let cleanup: () => void;
  const cli = (args: string[]) => runCli(args, { cwd: dir });
  const listed = async () =>
    (await cli(["notify", "list", "--json"])).json.data.webhooks.map((w: { url: string }) => w.url);

  before(async () => {
    ({ dir, cleanup } = tempDir());
    assert.equal((await cli(["init"])).code, 0);
  });
  after(() => cleanup());

  const privateTargets = [
    "http://127.0.0.1:9000/hook",
    "http://127.1/hook", // 127.0.0.1 written short
    "http://2130706433/hook", // 127.0.0.1 as one number
    "http://0x7f.0.0.1/hook",
    "http://0.0.0.0:8080/",
    "http://10.1.2.3/",
    "http://172.20.0.5/",
    "http://192.168.1.10/",
    "http://169.254.169.254/latest/meta-data/", // cloud metadata
    "http://100.64.0.1/",
    "http://[::1]:9000/",
    "http://[::]/",
    "http://[fe80::1]/",
    "http://[fd12:3456::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a00:1]/",
    "http://localhost:3000/hook",
    "http://LOCALHOST./hook",
    "http://api.localhost/hook",
    "http://printer.local/hook",
    "http://metadata.google.internal/",
  ];

  for (const url of privateTargets)
    it(`refuses ${url} without --allow-private`, async () => {
      const result = await cli(["notify", "add", url, "--json"]);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.equal(result.json.error.code, "WEBHOOK_TARGET_REFUSED");
      assert.equal(result.json.error.details.reason, "private");
      assert.match(result.json.error.suggestions[0], /--allow-private/);
      assert.deepEqual(await listed(), [], "nothing was added");
    });

  it("adds a private target a person allows explicitly with --allow-private", async () => {
    const result = await cli(["notify", "add", "http://127.0.0.1:9000/hook", "--allow-private", "--json"]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.deepEqual(await listed(), ["http://127.0.0.1:9000/hook"]);
    await cli(["notify", "remove", result.json.data.webhook.id]);
  });

  it("refuses a URL with user:pass even with --allow-private: no delivery could send it", async () => {
    for (const url of ["https://bot:s3cret@hooks.example.com/arbeit", "https://token@hooks.example.com/"]) {
      const result = await cli(["notify", "add", url, "--allow-private", "--json"]);
      assert.equal(result.code, 1, result.stdout);
      assert.equal(result.json.error.code, "WEBHOOK_TARGET_REFUSED");
      assert.equal(result.json.error.details.reason, "credentials");
      assert.ok(!result.stdout.includes("s3cret"), "the refusal does not repeat the password");
    }
    assert.deepEqual(await listed(), []);
  });

  it("adds public targets as they are", async () => {
    const urls = [
      "https://hooks.slack.com/services/T000/B000/XXXX",
      "https://ntfy.sh/my-team-arbeit?tpl=1",
      "http://93.184.216.34/hook",
      "https://[2606:4700::1111]/hook",
      "https://localhost.example.com/hook",
    ];
    for (const url of urls) {
      const result = await cli(["notify", "add", url, "--json"]);
      assert.equal(result.code, 0, `${url}: ${result.stdout}`);
    }
    assert.deepEqual((await listed()).length, urls.length);
  });

  it("says --allow-private goes with add only", async () => {
    const result = await cli(["notify", "list", "--allow-private"]);
    assert.equal(result.code, 2);
  });
});
