import assert from "node:assert/strict";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { forEachEngine, type HostileProject } from "./engines.js";

/**
 * Credentials and delivery targets never travel in a copy for sharing. `arbeit export` leaves out
 * the service's tokens and the webhooks (URLs and signing secrets); `arbeit import` leaves out any
 * a file holds and keeps the store's own, `--replace` included. A restore asks for them:
 * `export --with-credentials` / `import --with-credentials`, and `arbeit backup`. On both engines.
 */

const tableOf = (line: string) => (JSON.parse(line) as { table?: string }).table;

async function tokenNames(project: HostileProject): Promise<string[]> {
  const listed = await project.cli(["token", "list", "--json"]);
  return listed.json.data.tokens.map((token: { name: string }) => token.name).sort();
}
async function webhookUrls(project: HostileProject, db?: string): Promise<string[]> {
  const listed = await project.cli([...(db ? ["--db", db] : []), "notify", "list", "--json"]);
  return listed.json.data.webhooks.map((webhook: { url: string }) => webhook.url);
}

forEachEngine("credentials and delivery targets in exports and imports", (project) => {
  let source: HostileProject;
  let signing: string;
  const theirs = "https://hooks.example.com/their-team";

  /** A project with a person's token, a webhook and a task: what another team would export. */
  async function sourceProject(): Promise<void> {
    source = await project();
    await source.cli(["token", "create", "--person", "dana"]);
    signing = (await source.cli(["notify", "add", theirs, "--json"])).json.data.secret;
    await source.cli(["task", "create", "--title", "Shared work"]);
  }

  it("arbeit export carries no token, webhook URL or signing secret; the header lists their tables empty", async () => {
    await sourceProject();
    const result = await source.cli(["export"]);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trim().split("\n");
    const header = JSON.parse(lines[0]!);
    const rows = (name: string) => header.tables.find((table: { name: string }) => table.name === name).rows;
    assert.deepEqual([rows("tokens"), rows("webhooks")], [0, 0]);
    assert.deepEqual(
      lines.slice(1).filter((line) => ["tokens", "webhooks"].includes(tableOf(line)!)),
      [],
    );
    for (const secret of [signing, theirs])
      assert.ok(!result.stdout.includes(secret), `${secret.slice(0, 20)}... is not in the export`);
    assert.ok(
      lines.some((line) => line.includes("Shared work")),
      "the work itself travels",
    );
  });

  it("arbeit import leaves out a file's tokens and webhooks and keeps the store's own, --replace included", async () => {
    const restoreCopy = join(source.dir, "with-credentials.jsonl");
    const exported = await source.cli(["export", restoreCopy, "--with-credentials"]);
    assert.equal(exported.code, 0, exported.stdout);
    assert.equal((statSync(restoreCopy).mode & 0o777).toString(8), "600", "a restore's copy is its owner's alone");

    const target = await project();
    const shared = await target.cli(["import", restoreCopy]);
    assert.equal(shared.code, 0, shared.stdout);
    assert.equal(shared.json.data.credentials_imported, false);
    assert.equal(shared.json.data.credentials_left_out, 2);
    assert.deepEqual(await tokenNames(target), []);
    assert.deepEqual(await webhookUrls(target), []);
    const tasks = await target.cli(["query", "tasks", "--json"]);
    assert.ok(JSON.stringify(tasks.json).includes("Shared work"), "the work itself came in");

    await target.cli(["token", "create", "--agent", "our-ci"]);
    await target.cli(["notify", "add", "https://hooks.example.com/our-team"]);
    const replaced = await target.cli(["import", restoreCopy, "--replace"]);
    assert.equal(replaced.code, 0, replaced.stdout);
    assert.deepEqual(await tokenNames(target), ["our-ci"], "--replace does not swap the project's tokens");
    assert.deepEqual(await webhookUrls(target), ["https://hooks.example.com/our-team"]);

    const restored = await target.cli(["import", restoreCopy, "--replace", "--with-credentials"]);
    assert.equal(restored.code, 0, restored.stdout);
    assert.equal(restored.json.data.credentials_imported, true);
    assert.deepEqual(await tokenNames(target), ["dana"], "a restore asked for them");
    assert.deepEqual(await webhookUrls(target), [theirs]);
  });

  it("a file from an older version that holds them is a copy for sharing too", async () => {
    // What `arbeit export` wrote before: every table, tokens and webhooks included.
    const old = await source.cli(["export", "-", "--with-credentials"]);
    const file = join(source.dir, "older.jsonl");
    writeFileSync(file, old.stdout);
    const target = await project();
    const imported = await target.cli(["import", file]);
    assert.equal(imported.code, 0, imported.stdout);
    assert.deepEqual(await tokenNames(target), []);
    assert.deepEqual(await webhookUrls(target), []);
  });

  it("arbeit backup keeps them: it is a restore's copy", async () => {
    const copy = join(source.dir, "backup.db");
    const result = await source.cli(["backup", copy]);
    assert.equal(result.code, 0, result.stdout);
    assert.deepEqual(await webhookUrls(source, copy), [theirs]);
    const tokens = await source.cli(["--db", copy, "token", "list", "--json"]);
    assert.deepEqual(
      tokens.json.data.tokens.map((t: { name: string }) => t.name),
      ["dana"],
    );
  });
});
