import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { ARBEIT_SETTINGS, CLI } from "../helpers/cli.js";
import { checkout, closedPort } from "../remote/harness.js";
import type { UiProject } from "../ui/harness.js";
import { startService } from "./harness.js";

/**
 * `arbeit serve` in a process that sends its own calls to a service would serve a store those
 * calls do not use: it refuses before anything listens.
 */
function refusal(dir: string, env: Record<string, string>): Promise<{ code: number | null; json: any }> {
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const key of ARBEIT_SETTINGS) if (!env[key]) delete full[key];
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--json"], { cwd: dir, env: full });
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => (out += chunk));
  // A service that did start would never exit by itself: stop it, and the test fails on its code.
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(out);
      } catch {
        json = out;
      }
      resolve({ code, json });
    }),
  );
}

describe("arbeit serve in a process pointed at a service", () => {
  it("refuses with STORE_UNAVAILABLE when ARBEIT_URL is set, though the checkout has a store", async () => {
    const laptop = checkout();
    try {
      assert.equal((await laptop.cli(["init", "--json"])).code, 0);
      const url = `http://127.0.0.1:${await closedPort()}`;
      const { code, json } = await refusal(laptop.dir, { ...laptop.env, ARBEIT_URL: url });
      assert.equal(code, 1);
      assert.equal(json.error.code, "STORE_UNAVAILABLE");
      assert.match(json.error.message, /ARBEIT_URL is set/);
      assert.ok(json.error.message.includes(url), json.error.message);
    } finally {
      laptop.close();
    }
  });

  it("refuses with STORE_UNAVAILABLE in a checkout recorded on a service", async () => {
    const laptop = checkout();
    try {
      const url = `http://127.0.0.1:${await closedPort()}`;
      assert.equal((await laptop.cli(["init", "--server", url, "--json"])).code, 0);
      const { code, json } = await refusal(laptop.dir, laptop.env);
      assert.equal(code, 1);
      assert.equal(json.error.code, "STORE_UNAVAILABLE");
      assert.match(json.error.message, /\.arbeit\/service\.json names it/);
    } finally {
      laptop.close();
    }
  });

  it("an explicit --db file is served all the same", async () => {
    const laptop = checkout();
    try {
      assert.equal((await laptop.cli(["init", "--json"])).code, 0);
      const env = { ...laptop.env, ARBEIT_URL: `http://127.0.0.1:${await closedPort()}` };
      const service = await startService({ dir: laptop.dir, env } as unknown as UiProject, [
        "--db",
        ".arbeit/arbeit.db",
      ]);
      try {
        const health = await fetch(`${service.url}/healthz`);
        assert.equal(health.status, 200);
      } finally {
        await service.stop();
      }
    } finally {
      laptop.close();
    }
  });
});
