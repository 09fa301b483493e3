import { readFileSync } from "node:fs";

let known: string | undefined;

/** This Arbeit's release, from its package.json (read once per process): the CLI, the library and the OpenCode plugin all name it. */
export function version(): string {
  known ??= (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
  return known;
}
