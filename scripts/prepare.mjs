// Runs on `npm install` in a checkout: builds dist/ so that `npx arbeit` works straight away.
// Skipped where the compiler is absent (an install of the published package, which ships dist/).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const tsc = join(root, "node_modules", ".bin", "tsc");
if (existsSync(tsc) && existsSync(join(root, "tsconfig.build.json"))) {
  const result = spawnSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" });
  process.exit(result.status ?? 1);
}
