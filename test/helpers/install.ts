import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** This checkout installed in a project as npm installs a dependency: the package folder and its bin link. */
export function installArbeitInto(dir: string): void {
  writeFileSync(join(dir, "package.json"), '{"name": "app", "private": true}\n');
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(REPO, join(dir, "node_modules", "arbeit"), "dir");
  symlinkSync("../arbeit/bin/arbeit.cjs", join(dir, "node_modules", ".bin", "arbeit"));
}
