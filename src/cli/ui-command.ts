import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { nameProblem } from "../domain/identity.js";
import { openProject } from "../service/project.js";
import type { SqlStore } from "../store/sql/database.js";
import { failure } from "../tools/envelope.js";
import type { Dashboard } from "../ui/server/server.js";
import { commandFlags } from "./command-flags.js";
import { envSetting, type GlobalOptions } from "./global-options.js";
import { LOOPBACK, portFlag } from "./listen-flags.js";
import { printEnvelope, wantsJson } from "./output.js";
import { UsageError } from "./usage-error.js";

const DEFAULT_PORT = 7341;

const USAGE = `Usage: arbeit ui [--port N] [--host H] [--open] [--read-only] [--as NAME]

Serves a live dashboard of this project's tasks: board, tree, dependency graph, task detail,
agents, activity and an inbox of agents' questions. The first line on stdout is the URL to open;
it carries a random token (after #), which the page keeps for that address only, never in a
cookie. Runs until interrupted (Ctrl-C).

  --port N      port to listen on (default ${DEFAULT_PORT}, or a free one when that is taken; 0: any free port)
  --host H      address to listen on (default 127.0.0.1: only this machine can connect)
  --open        open the URL in the default browser
  --read-only   show everything, change nothing
  --as NAME     who edits: changes are made as the agent human:NAME (default: ARBEIT_AGENT's name
                after "human:", else your login name)

Works on SQLite and on a shared Postgres store (ARBEIT_DATABASE_URL). More: docs/dashboard.md.
`;

function parse(argv: string[]) {
  const options = {
    port: { type: "string" },
    host: { type: "string" },
    open: { type: "boolean" },
    "read-only": { type: "boolean" },
    as: { type: "string" },
  } as const;
  return commandFlags(argv, options, USAGE).values;
}

function personName(given: string | undefined): string {
  const fromEnv = envSetting(process.env, "ARBEIT_AGENT");
  let name = given ?? (fromEnv?.startsWith("human:") ? fromEnv.slice("human:".length) : undefined);
  if (name === undefined) {
    try {
      name = userInfo().username;
    } catch {
      name = "person";
    }
  }
  const problem = nameProblem(`human:${name}`);
  if (problem || name === "") throw new UsageError(`--as: the name ${problem ?? "must not be empty"}.`, USAGE);
  return name;
}

const htmlAttribute = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/**
 * Opens the URL in the default browser without putting the token on a command line, where every
 * user of the machine can read it (`ps`): the browser is handed a file that only this user can
 * read, which forwards to the URL. Returns what removes the file again.
 */
function openInBrowser(url: string): () => void {
  const dir = mkdtempSync(join(tmpdir(), "arbeit-ui-"));
  const file = join(dir, "open.html");
  const target = htmlAttribute(url);
  writeFileSync(
    file,
    `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0;url=${target}">\n<title>Arbeit</title>\n<a href="${target}">Open the Arbeit dashboard</a>\n`,
    { mode: 0o600 },
  );
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [file]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", file]]
        : ["xdg-open", [file]];
  const child = spawn(command, args, { stdio: "ignore", detached: true });
  child.on("error", () =>
    process.stderr.write(`Could not open a browser (${command}); open the URL above yourself.\n`),
  );
  child.unref();
  return () => rmSync(dir, { recursive: true, force: true });
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = parse(argv);
  const port = portFlag(flags.port, DEFAULT_PORT, USAGE);
  const host = flags.host ?? "127.0.0.1";
  const person = personName(flags.as);
  const readOnly = flags["read-only"] === true;

  const cwd = process.cwd();
  const db = options.db ?? process.env.ARBEIT_DB;
  let dashboard: Dashboard | undefined;
  let service: Awaited<ReturnType<typeof openProject>> | undefined;
  try {
    service = await openProject({ cwd, db });
    const store = service.store as unknown as SqlStore;
    const { startDashboard } = await import("../ui/server/server.js");
    const start = (at: number) =>
      startDashboard({
        service: service!,
        person,
        readOnly,
        host,
        port: at,
        cwd,
        db,
        engine: store.dialect.name === "postgres" ? "postgres" : "sqlite",
        location: store.location,
      });
    try {
      dashboard = await start(port);
    } catch (error) {
      // The default port taken (another dashboard, say): any free one will do.
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || flags.port !== undefined) throw error;
      dashboard = await start(0);
    }
  } catch (error) {
    await service?.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EADDRNOTAVAIL" || code === "EACCES") {
      process.stderr.write(`arbeit ui: cannot listen on ${host}:${port} (${code}). Try another --port, or --port 0.\n`);
      return 1;
    }
    return printEnvelope(failure(error), wantsJson(options.json));
  }

  process.stdout.write(`${dashboard.url}\n`);
  process.stderr.write(
    `Arbeit dashboard for ${(service.store as unknown as SqlStore).location}${readOnly ? ", read-only" : `; changes are made as human:${person}`}. Ctrl-C stops it.\n`,
  );
  if (!LOOPBACK.has(host))
    process.stderr.write(
      `Listening on ${host}: other machines can reach it. Anyone with the URL's token can ${readOnly ? "read" : "change"} your tasks.\n`,
    );
  const removeOpener = flags.open ? openInBrowser(dashboard.url) : undefined;

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  removeOpener?.();
  await dashboard.close();
  await service.close();
  return 0;
}
