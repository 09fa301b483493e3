import { dirname } from "node:path";
import { compareVersions } from "../domain/client-versions.js";
import { type StatusReport, storeStatus } from "../maintenance/status.js";
import type { ServiceStatus } from "../remote/service-status.js";
import { type ServiceTarget, serviceTarget } from "../remote/target.js";
import { locate } from "../service/project.js";
import { claudeStatus, opencodeStatus } from "../setup/host-status.js";
import { readStoreRecord, type StoreRecord } from "../store/store-record.js";
import { failure } from "../tools/envelope.js";
import type { GlobalOptions } from "./global-options.js";
import { maintenanceArgs } from "./maintenance-args.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { onProjectStore, storeWhere } from "./project-store.js";
import { terminalLine, terminalSafe } from "./terminal-text.js";

const USAGE = `Usage: arbeit status

Shows the store (where it is, its engine and schema version), how many tasks it holds by status,
who is working on what now, live and expired claims, and which hosts (Claude Code, OpenCode) are
set up in this project. Lists what needs attention: claims whose lease ran out, a store that
cannot be written, a host set up only in part, or a hook, server or plugin that names a file which
no longer exists. Exit 0 when nothing needs attention, 1 when something does (or there is no
store), so scripts and CI can run it as a check. --json prints the report as JSON.
`;

/** What the store holds and who works on what: the same lines for a local store and for a service's. */
function pictureLines(report: Pick<StatusReport, "tasks" | "working" | "claims">): string[] {
  const { tasks } = report;
  return [
    `Tasks:   ${tasks.total} (${tasks.open} open, ${tasks.in_progress} in progress, ${tasks.completed} completed, ${tasks.cancelled} cancelled)`,
    `Working: ${report.working.length === 0 ? "nobody" : `${report.working.length} session(s)`}`,
    ...report.working.map(
      (work) =>
        `  ${work.task_id}  ${terminalLine(work.title, 60)}  (${work.agent ?? "no agent"}, session ${work.session_id}, since ${work.since})`,
    ),
    `Claims:  ${report.claims.live} live, ${report.claims.expired} expired`,
  ];
}

function renderText(report: StatusReport & { store: { recorded?: StoreRecord } }): string {
  const { store } = report;
  const lines = [
    `Store:   ${store.location} (${store.engine}, schema ${store.schema_version}${store.read_only ? ", read-only" : ""})`,
    ...(store.recorded
      ? [
          `         recorded in .arbeit/config.json: ${store.recorded.store}, ${"schema" in store.recorded ? `schema ${store.recorded.schema}` : store.recorded.url}`,
        ]
      : []),
    ...pictureLines(report),
    "Hosts:",
    ...report.hosts.map((host) => `  ${host.host.padEnd(12)} ${host.detail}`),
  ];
  if (report.attention.length === 0) lines.push("Nothing needs attention.");
  else {
    lines.push("Needs attention:");
    for (const item of report.attention) {
      lines.push(`  ${item.message}`);
      if (item.hint) lines.push(`    hint: ${item.hint}`);
    }
  }
  // Titles, session ids and paths are stored or configured text, shown on a terminal.
  return terminalSafe(`${lines.join("\n")}\n`, { newlines: true });
}

/** The service's release beside this client's: the same, newer or older (information; the service decides whom it serves). */
function releaseLine(versions: ServiceStatus["versions"]): string {
  if (versions.service === null) return `Release: this client ${versions.client}; the service does not say its own`;
  const order = compareVersions(versions.service, versions.client);
  const relation =
    order === 0
      ? "the same as this client"
      : order > 0
        ? `newer than this client, ${versions.client}`
        : `older than this client, ${versions.client}`;
  const clients = versions.clients ? `; it serves clients ${versions.clients}` : "";
  return `Release: the service runs ${versions.service} (${relation})${clients}`;
}

/** Who the token is, as the service said: its name, kind, access and expiry. */
function tokenLine(report: ServiceStatus): string {
  const from =
    report.token === "missing" ? "none" : report.token === "stored" ? "stored by arbeit login" : "from ARBEIT_TOKEN";
  const who = report.remote?.token;
  if (!who) return `Token:   ${from}`;
  const expiry = who.expires_at ? `expires ${who.expires_at}` : "does not expire";
  return `Token:   ${from}: ${who.name} (${who.kind}, acts as ${who.acts_as}, ${who.access}, ${expiry})`;
}

/** Why a service's certificate was refused, as the status line says it. */
const CERTIFICATE = {
  untrusted: "its certificate is not trusted",
  expired: "its certificate has expired or is not valid yet",
  wrong_name: "its certificate names another host",
} as const;

/** A checkout that uses an Arbeit service: where it is, whether it answers, who the token is, and what the store holds. */
async function remoteStatus(target: ServiceTarget, options: GlobalOptions): Promise<number> {
  const { serviceStatus } = await import("../remote/service-status.js");
  const report = await serviceStatus(target);
  if (wantsJson(options.json)) write(1, `${JSON.stringify(report)}\n`);
  else {
    const remote = report.remote;
    const lines = [
      `Store:   the Arbeit service at ${report.store.url} (${report.store.from === "record" ? `named in ${report.store.file ?? ".arbeit/"}` : "from ARBEIT_URL"}), ${report.reachable ? "answering" : report.certificate ? CERTIFICATE[report.certificate] : "not answering"}`,
      ...(report.store.ca ? [`CA:      ${report.store.ca}`] : []),
      ...(report.reachable || report.versions.service !== null ? [releaseLine(report.versions)] : []),
      tokenLine(report),
      ...(remote
        ? [
            `         its store: ${remote.store.engine}, schema ${remote.store.schema_version}${remote.store.read_only ? ", read-only" : ""}`,
            ...pictureLines(remote),
          ]
        : []),
      ...(report.ok ? ["Nothing needs attention."] : ["Needs attention:"]),
      ...report.attention.flatMap((item) => [`  ${item.message}`, ...(item.hint ? [`    hint: ${item.hint}`] : [])]),
    ];
    write(1, terminalSafe(`${lines.join("\n")}\n`, { newlines: true }));
  }
  return report.ok ? 0 : 1;
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  maintenanceArgs(argv, { flags: [], positionals: { min: 0, max: 0 } }, USAGE);
  const where = storeWhere(options);
  let remote: ServiceTarget | undefined;
  try {
    remote = serviceTarget(where);
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  }
  if (remote) return remoteStatus(remote, options);
  return onProjectStore(options, async (store) => {
    const location = locate(where);
    const root = location?.root ?? process.cwd();
    const report = await storeStatus(store, [claudeStatus(root), opencodeStatus(root)]);
    // What the checkout records (.arbeit/config.json), beside the store it reached.
    const recorded = location && !where.db ? readStoreRecord(dirname(location.dbPath)) : undefined;
    const shown = recorded ? { ...report, store: { ...report.store, recorded } } : report;
    write(1, wantsJson(options.json) ? `${JSON.stringify(shown)}\n` : renderText(shown));
    return report.ok ? 0 : 1;
  });
}
