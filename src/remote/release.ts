import { readFileSync } from "node:fs";

let known: string | undefined;

/**
 * This Arbeit's release, from its package.json (read once per process): what its clients name to
 * the service and the service names back. Here, not in the CLI, because the library's own clients
 * (the OpenCode plugin, `arbeit mcp`'s connection) need it too, and the CLI's folder is not part
 * of the library build.
 */
export function version(): string {
  known ??= (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
  return known;
}
