import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { type Engine, type UiProject, uiProject } from "../ui/harness.js";

/** `arbeit token`: the administrator makes, lists and revokes the tokens of `arbeit serve`. */
for (const engine of ["sqlite", "postgres"] as Engine[]) {
  describe(`arbeit token on ${engine}`, { skip: engine === "postgres" ? await postgresSkip() : false }, () => {
    let project: UiProject;
    const token = (args: string[]) => runCli(["token", ...args], { cwd: project.dir, env: project.env });
    before(async () => {
      project = await uiProject(engine);
    });
    after(() => project?.close());

    it("create prints the secret once and says on stderr that it is shown only once", async () => {
      const made = await token(["create", "--agent", "alice"]);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.json.data.secret, /^arb_[A-Za-z0-9_-]{43}$/);
      assert.match(made.json.data.token.id, /^tok-[a-z0-9]{8}$/);
      assert.deepEqual([made.json.data.token.name, made.json.data.token.kind], ["alice", "agent"]);
      assert.match(made.stderr, /shown only once/);
    });

    it("create --json gives the token and its secret; list never shows a secret or hash", async () => {
      const made = await token(["create", "--person", "bob", "--read-only", "--expires", "30d", "--json"]);
      const { token: bob, secret } = made.json.data;
      assert.equal(bob.kind, "person");
      assert.equal(bob.read_only, true);
      assert.ok(Date.parse(bob.expires_at) > Date.now() + 29 * 86_400_000);
      const listed = await token(["list", "--json"]);
      assert.deepEqual(
        listed.json.data.tokens.map((t: any) => [t.name, t.kind, t.state]),
        [
          ["alice", "agent", "active"],
          ["bob", "person", "active"],
        ],
      );
      const text = (await token(["list"])).stdout;
      for (const output of [listed.stdout, text]) {
        assert.ok(!output.includes(secret.slice(4, 20)), "the secret is not listed");
        assert.doesNotMatch(output, /[0-9a-f]{64}|hash/, "no hash is listed");
      }
    });

    it("revoke by name stops every live token of that name, and is logged with creation", async () => {
      const revoked = await token(["revoke", "alice", "--json"]);
      assert.equal(revoked.code, 0, revoked.stdout);
      assert.equal(revoked.json.data.revoked.length, 1);
      const listed = await token(["list", "--json"]);
      assert.equal(listed.json.data.tokens.find((t: any) => t.name === "alice").state, "revoked");
      const events = await project.cli(["call", "arbeit_query", '{"query": "events", "params": {"limit": 50}}']);
      const log = events.events
        .filter((e: any) => e.entity_type === "token")
        .map((e: any) => [e.event_type, e.payload.name]);
      assert.deepEqual(log, [
        ["token_created", "alice"],
        ["token_created", "bob"],
        ["token_revoked", "alice"],
      ]);
    });

    it("revoking what is not there, or twice, is an error that changes nothing", async () => {
      const again = await token(["revoke", "alice", "--json"]);
      assert.equal(again.code, 1);
      assert.equal(again.json.error.code, "INVALID_ARGUMENT");
      const missing = await token(["revoke", "tok-zzzzzzzz", "--json"]);
      assert.match(missing.json.error.message, /No live token/);
    });

    it("a store with tokens and their events passes arbeit doctor", async () => {
      const doctor = await runCli(["doctor", "--json"], { cwd: project.dir, env: project.env });
      assert.equal(doctor.code, 0, doctor.stdout);
    });

    it("refuses an agent name that passes for a person's, and an expiry in the past", async () => {
      const human = await token(["create", "--agent", "human:eve", "--json"]);
      assert.equal(human.json.error.code, "INVALID_ARGUMENT");
      const past = await token(["create", "--agent", "eve", "--expires", "2020-01-01", "--json"]);
      assert.equal(past.json.error.code, "INVALID_ARGUMENT");
      const both = await token(["create", "--agent", "eve", "--person", "eve"]);
      assert.equal(both.code, 2);
      assert.equal((await token(["list", "--json"])).json.data.tokens.length, 2);
    });

    it("a name an agent and a person share is refused for revoke, listing the choices; the form list prints is taken", async () => {
      for (const args of [
        ["--agent", "erin"],
        ["--person", "erin"],
        ["--person", "human:dana"],
        ["--ci", "github"],
      ]) {
        const made = await token(["create", ...args, "--json"]);
        assert.equal(made.code, 0, made.stdout);
      }
      const states = async () =>
        Object.fromEntries(
          (await token(["list", "--json"])).json.data.tokens
            .filter((t: any) => ["erin", "dana", "ci:github"].includes(t.name))
            .map((t: any) => [`${t.kind} ${t.name}`, t.state]),
        );
      const ambiguous = await token(["revoke", "erin", "--json"]);
      assert.equal(ambiguous.code, 1);
      assert.equal(ambiguous.json.error.code, "INVALID_ARGUMENT");
      assert.deepEqual(ambiguous.json.error.details.choices, ["agent:erin", "human:erin"]);
      assert.deepEqual(await states(), {
        "agent erin": "active",
        "person erin": "active",
        "person dana": "active",
        "agent ci:github": "active",
      });
      for (const name of ["human:dana", "human:erin", "ci:github"]) {
        const revoked = await token(["revoke", name, "--json"]);
        assert.equal(revoked.code, 0, revoked.stdout);
        assert.equal(revoked.json.data.revoked.length, 1, name);
      }
      assert.deepEqual(await states(), {
        "agent erin": "active",
        "person erin": "revoked",
        "person dana": "revoked",
        "agent ci:github": "revoked",
      });
      assert.equal((await token(["revoke", "agent:erin"])).code, 0);
      assert.equal((await states())["agent erin"], "revoked");
      for (const bad of [
        ["--agent", "ci:fake"],
        ["--agent", "agent:erin"],
      ]) {
        const refused = await token(["create", ...bad, "--json"]);
        assert.notEqual(refused.code, 0, bad.join(" "));
      }
    });
  });
}
