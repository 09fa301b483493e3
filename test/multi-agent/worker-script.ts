import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { transformSync } from "esbuild";

const SOURCE = fileURLToPath(new URL("./worker.ts", import.meta.url));
const DIST = fileURLToPath(new URL("../../dist/", import.meta.url));
let compiled: string | undefined;

/**
 * worker.ts compiled to plain JavaScript, once per test process: the command and environment that
 * start a worker with `node` alone. (Its types are stripped; the code is the same.)
 */
export function workerScript(): { script: string; env: Record<string, string> } {
  if (!compiled) {
    const dir = join(tmpdir(), `arbeit-worker-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    compiled = join(dir, "worker.mjs");
    const { code } = transformSync(readFileSync(SOURCE, "utf8"), { loader: "ts", format: "esm", target: "node20" });
    writeFileSync(compiled, code);
  }
  return { script: compiled, env: { WORKER_DIST: DIST } };
}
