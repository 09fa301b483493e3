import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { hostMissing } from "../helpers/hosts.js";
import { requirement } from "../helpers/requirements.js";
import { tempDir } from "../helpers/temp.js";
import { OPENCODE, REPO } from "./harness.js";

/**
 * The plugin runs inside the Bun that the opencode binary embeds, which is not the Bun the rest of
 * the suite runs under (test/helpers/hosts.ts pins that one). `BUN_BE_BUN=1 opencode <script>`
 * runs a script with the embedded Bun itself: here, the SQLite driver the plugin uses, on the
 * kind of table Arbeit writes (one whose insert trigger writes another row).
 */

const cannotRun = requirement("the real-opencode tests", hostMissing("opencode"));

const SCRIPT = `
import { openBunDriver } from ${JSON.stringify(join(REPO, "src", "store", "sqlite", "driver-bun.ts"))};
const db = openBunDriver(process.argv[2]);
db.exec("CREATE TABLE edges (id TEXT PRIMARY KEY, child TEXT NOT NULL);" +
  "CREATE TABLE counts (child TEXT PRIMARY KEY, n INTEGER NOT NULL);" +
  "CREATE TRIGGER edge_added AFTER INSERT ON edges BEGIN " +
  "INSERT INTO counts (child, n) VALUES (NEW.child, 1) ON CONFLICT (child) DO UPDATE SET n = n + 1; END;");
const insert = db.prepare("INSERT INTO edges (id, child) VALUES (?, ?) ON CONFLICT (id) DO NOTHING");
const update = db.prepare("UPDATE edges SET child = ? WHERE id = ?");
console.log(JSON.stringify({
  bun: Bun.version,
  inserted: insert.run("e1", "a").changes,
  clashed: insert.run("e1", "b").changes,
  updated: update.run("c", "e1").changes,
  missed: update.run("c", "nope").changes,
}));
db.close();
`;

describe("the SQLite driver inside OpenCode's own Bun", { skip: cannotRun }, () => {
  let dir: string;
  let cleanup: () => void;
  before(() => {
    ({ dir, cleanup } = tempDir("arbeit-embedded-bun-"));
    writeFileSync(join(dir, "changes.ts"), SCRIPT);
  });
  after(() => cleanup?.());

  it("counts only the rows a statement itself changed, never those its triggers wrote", () => {
    const out = execFileSync(OPENCODE, [join(dir, "changes.ts"), join(dir, "store.db")], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir, BUN_BE_BUN: "1" },
      encoding: "utf8",
      timeout: 60_000,
    });
    const counts = JSON.parse(out.trim().split("\n").at(-1)!);
    assert.match(counts.bun, /^\d+\.\d+\.\d+/);
    assert.deepEqual(
      { ...counts, bun: undefined },
      { bun: undefined, inserted: 1, clashed: 0, updated: 1, missed: 0 },
      `under Bun ${counts.bun}`,
    );
  });
});
