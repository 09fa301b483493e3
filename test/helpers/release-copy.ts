import { cpSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "./temp.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * This checkout's built Arbeit as another release: dist/ and migrations/ copied beside a
 * package.json that names `version`, with this checkout's node_modules. The code is this one; the
 * release it states (and sends as Arbeit-Version) is `version`, as an older or newer install would.
 */
export function releaseCopy(version: string): { cli: string; cleanup(): void } {
  const { dir, cleanup } = tempDir("arbeit-release-");
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
  cpSync(join(ROOT, "dist"), join(dir, "dist"), { recursive: true, filter: (src) => !src.includes(".cache") });
  cpSync(join(ROOT, "migrations"), join(dir, "migrations"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return { cli: join(dir, "dist", "cli", "main.js"), cleanup };
}
