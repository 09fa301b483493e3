import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { ArbeitError } from "../domain/errors.js";
import { serviceTarget } from "../remote/target.js";
import { DEFAULT_LIMITS, DEFAULT_SESSION_IDLE_S } from "../serve/limits.js";
import { LOG_FORMATS, type LogFormat } from "../serve/request-log.js";
import { openProject } from "../service/project.js";
import type { SqlStore } from "../store/sql/database.js";
import { failure } from "../tools/envelope.js";
import { commandFlags } from "./command-flags.js";
import type { GlobalOptions } from "./global-options.js";
import { LOOPBACK, portFlag } from "./listen-flags.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { UsageError } from "./usage-error.js";

const DEFAULT_PORT = 7474;

const USAGE = `Usage: arbeit serve [--port N] [--host H] [--tls-cert FILE --tls-key FILE]
                    [--allow-host NAME]... [--insecure-no-tls] [--request-timeout S]
                    [--rate N] [--burst N] [--max-sessions N] [--session-idle S]
                    [--no-migrate] [--log-format text|json] [--db <file>]

Serves this project's store to a team, on one port, until SIGTERM or Ctrl-C:
  POST /api/call   {"tool": "<name>", "args": {...}, "session": "<id>"} -> the tool's envelope
  POST /api/hook   one step of a hook of Arbeit's own clients (Claude Code, OpenCode, arbeit track)
  /mcp             MCP over Streamable HTTP (the same tools as \`arbeit mcp\`)
  GET  /healthz    whether the service and its store answer, its release and the client
                   releases it serves (no token needed)
  GET  /api/status who the token is, the tasks by status and who works on what (any token)
  GET  /metrics    Prometheus metrics (a person's token: docs/team.md#metrics)
  /board, /api/*   the dashboard (arbeit ui's), where people sign in with a person's token
Every other request needs "Authorization: Bearer <token>" (arbeit token create). An MCP client
acts in its MCP session, or in the session its X-Arbeit-Session header names.
The first line on stdout is the URL; stderr gets one line per request, with the client's address.

  --port N            port to listen on (default ${DEFAULT_PORT}; 0: any free port)
  --host H            address to listen on (default 127.0.0.1: only this machine)
  --tls-cert FILE     serve HTTPS with this certificate (PEM; the chain, if any, after it)
  --tls-key FILE      ... and this private key (PEM)
  --allow-host NAME   also answer to this Host (name or name:port; repeatable): the public
                      name a reverse proxy passes on (docs/team.md#tls-and-reverse-proxies)
  --rate N            calls a second one token may make, on average (default ${DEFAULT_LIMITS.rate})
  --burst N           calls one token may make at once (default ${DEFAULT_LIMITS.burst})
  --max-sessions N    streams one token may hold open: MCP sessions and dashboard live streams
                      (default ${DEFAULT_LIMITS.sessions})
  --session-idle S    seconds an MCP session may sit idle (no request, no stream open) before it
                      is closed, freeing its place; its id is then answered 404 (default
                      ${DEFAULT_SESSION_IDLE_S})
  --insecure-no-tls   allow a --host other machines reach, without TLS (tokens cross the network
                      in clear text: use it behind a TLS-terminating proxy or on a trusted network)
  --log-format F      text (default) or json: each request's line as one JSON object (also
                      ARBEIT_LOG_FORMAT)
  --request-timeout S seconds a request may take to arrive, headers and body (default 30); a
                      slower one is cut with 408. Streams that answer it are not cut.
  --no-migrate        do not migrate the store at start: refuse to start (SCHEMA_TOO_OLD) if it
                      is behind this release's schema. Without it, serve starts by migrating a
                      Postgres store as \`arbeit migrate\` does (docs/postgres.md#upgrading-a-shared-store).

Works on SQLite and on Postgres (ARBEIT_DATABASE_URL). More: docs/team.md.
`;

function parse(argv: string[]) {
  return commandFlags(
    argv,
    {
      port: { type: "string" },
      host: { type: "string" },
      "insecure-no-tls": { type: "boolean" },
      "request-timeout": { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "allow-host": { type: "string", multiple: true },
      rate: { type: "string" },
      burst: { type: "string" },
      "max-sessions": { type: "string" },
      "session-idle": { type: "string" },
      "no-migrate": { type: "boolean" },
      "log-format": { type: "string" },
    },
    USAGE,
  ).values;
}

/** A flag given in seconds (fractions allowed), as milliseconds; `fallback` seconds when it is not given. */
function secondsFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback * 1000;
  if (!/^\d{1,6}(?:\.\d{1,3})?$/.test(value) || Number(value) <= 0)
    throw new UsageError(`${name} must be a positive number of seconds, not ${JSON.stringify(value)}.`, USAGE);
  return Math.round(Number(value) * 1000);
}

/** A flag that counts something (at least 1), or `fallback` when it is not given. */
function countFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1)
    throw new UsageError(`${name} must be a whole number of at least 1, not ${JSON.stringify(value)}.`, USAGE);
  return Number(value);
}

/** The certificate and key --tls-cert and --tls-key name, read; neither given: no TLS. */
function tlsFiles(cert: string | undefined, key: string | undefined): { cert: Buffer; key: Buffer } | undefined {
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined)
    throw new UsageError("--tls-cert and --tls-key go together: give both, or neither.", USAGE);
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new UsageError(`${flag} ${file}: cannot read it (${(error as NodeJS.ErrnoException).code}).`, USAGE);
    }
  };
  const files = { cert: read("--tls-cert", cert), key: read("--tls-key", key) };
  try {
    createSecureContext(files);
  } catch (error) {
    throw new UsageError(`--tls-cert and --tls-key do not make a usable pair: ${(error as Error).message}.`, USAGE);
  }
  return files;
}

/**
 * A process pointed at a service (ARBEIT_URL, or a checkout recorded by `arbeit init --server`)
 * sends its calls there: serving a store from it would serve one its own calls do not use.
 */
function refuseServiceCheckout(cwd: string, db: string | undefined): void {
  const remote = serviceTarget({ cwd, db });
  if (!remote) return;
  const where =
    remote.from === "ARBEIT_URL" ? "ARBEIT_URL is set" : `${remote.file ?? "this checkout's .arbeit/"} names it`;
  throw new ArbeitError(
    "STORE_UNAVAILABLE",
    `arbeit serve serves a store of its own, but this process uses the Arbeit service at ${remote.url} (${where}); nothing was started.`,
    {
      suggestions: [
        remote.from === "ARBEIT_URL"
          ? "Unset ARBEIT_URL for this command, or name the SQLite file to serve with --db."
          : "Run arbeit serve in the checkout that holds the store (or name a SQLite file with --db).",
      ],
      details: { path: remote.root, cause: "service_checkout", url: remote.url },
    },
  );
}

/**
 * The service at start is one of the two deliberate steps that migrate a shared store (the other
 * is `arbeit migrate`): said on stderr when it applied anything. With --no-migrate a store that is
 * behind stops the start instead of every call failing later.
 */
async function migrateAtStart(cwd: string, db: string | undefined, refuse: boolean): Promise<void> {
  const { migrateProjectStore } = await import("../maintenance/migrate-store.js");
  const step = await migrateProjectStore({ cwd, db, dryRun: refuse });
  if (refuse && step.engine === "postgres" && step.pending.length > 0) {
    const { schemaTooOld } = await import("../store/postgres/migrate.js");
    throw schemaTooOld(step.schema ?? step.location, step.from, step.from + step.pending.length);
  }
  if (step.applied.length > 0)
    process.stderr.write(
      `Migrated the store ${step.location} from schema version ${step.from} to ${step.to}: ${step.applied.map((m) => `${m.name} (${m.kind})`).join(", ")}.\n`,
    );
}

/** `arbeit serve`: one service in front of the project's store (docs/team.md). */
export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const flags = parse(argv);
  const port = portFlag(flags.port, DEFAULT_PORT, USAGE);
  const host = flags.host ?? "127.0.0.1";
  const requestTimeoutMs = secondsFlag("--request-timeout", flags["request-timeout"], 30);
  const sessionIdleMs = secondsFlag("--session-idle", flags["session-idle"], DEFAULT_SESSION_IDLE_S);
  const remote = !LOOPBACK.has(host);
  const limits = {
    rate: countFlag("--rate", flags.rate, DEFAULT_LIMITS.rate),
    burst: countFlag("--burst", flags.burst, DEFAULT_LIMITS.burst),
    sessions: countFlag("--max-sessions", flags["max-sessions"], DEFAULT_LIMITS.sessions),
  };
  const tls = tlsFiles(flags["tls-cert"], flags["tls-key"]);
  const logFormat = flags["log-format"] ?? process.env.ARBEIT_LOG_FORMAT ?? "text";
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat))
    throw new UsageError(
      `--log-format (or ARBEIT_LOG_FORMAT) is text or json, not ${JSON.stringify(logFormat)}.`,
      USAGE,
    );
  if (remote && !tls && !flags["insecure-no-tls"])
    throw new UsageError(
      `--host ${host} lets other machines connect, and without TLS tokens would cross the network in clear text. Give --tls-cert and --tls-key, or add --insecure-no-tls to accept clear text (behind a TLS proxy, or on a trusted network), or keep the default 127.0.0.1.`,
      USAGE,
    );

  const cwd = process.cwd();
  const db = options.db ?? process.env.ARBEIT_DB;
  let service: Awaited<ReturnType<typeof openProject>> | undefined;
  let running: Awaited<ReturnType<typeof import("../serve/server.js").startService>>;
  try {
    refuseServiceCheckout(cwd, db);
    await migrateAtStart(cwd, db, flags["no-migrate"] === true);
    service = await openProject({ cwd, db });
    const [{ startService }, { version }] = await Promise.all([
      import("../serve/server.js"),
      import("../service/release.js"),
    ]);
    running = await startService({
      service,
      cwd,
      db,
      host,
      port,
      version: version(),
      requestTimeoutMs,
      sessionIdleMs,
      tls,
      allowHosts: flags["allow-host"] ?? [],
      limits,
      logFormat: logFormat as LogFormat,
      log: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    await service?.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EADDRNOTAVAIL" || code === "EACCES") {
      process.stderr.write(`arbeit serve: cannot listen on ${host}:${port} (${code}). Try another --port.\n`);
      return 1;
    }
    return printEnvelope(failure(error), wantsJson(options.json));
  }

  // Listening before the URL is out: a SIGTERM sent the moment it is read still stops cleanly.
  const stopped = new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  process.stdout.write(`${running.url}\n`);
  process.stderr.write(
    `Arbeit service for ${(service.store as unknown as SqlStore).location} at ${running.url} (docs/team.md). SIGTERM or Ctrl-C stops it.\n`,
  );
  if (remote && !tls)
    process.stderr.write(
      `WARNING: listening on ${host} without TLS: other machines can connect, and tokens cross the network in clear text.\n`,
    );

  await stopped;
  process.stderr.write("Stopping: finishing the calls in flight.\n");
  await running.close();
  await service.close();
  return 0;
}
