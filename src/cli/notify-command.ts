import { addWebhook, listWebhooks, removeWebhook, WEBHOOK_KINDS, type Webhook } from "../notify/webhooks.js";
import { openProject } from "../service/project.js";
import type { SqlStore } from "../store/sql/database.js";
import { failure } from "../tools/envelope.js";
import { commandFlags } from "./command-flags.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit notify add <url> [--events question,answer,...] [--allow-private]
       arbeit notify list
       arbeit notify remove <id>

Webhooks: this project POSTs each chosen event to a URL, signed, while \`arbeit ui\` or
\`arbeit serve\` runs (docs/dashboard.md#webhooks). Agents never wait for a delivery.

  add       adds a webhook and prints its signing secret once
            --events K,K  what it hears of (default question): ${WEBHOOK_KINDS.join(", ")}
            --allow-private  a target on this machine or a private network (loopback,
                           10/8, 192.168/16, link-local, localhost names...): refused without it
  list      every webhook: id, URL, events, last delivery, last failure (never a secret)
  remove    stops a webhook
`;

const usage = (message: string) => new UsageError(message, USAGE, "notify");

const forHuman = (webhook: Webhook) =>
  [
    webhook.id,
    webhook.url,
    webhook.events.join(","),
    webhook.last_success_at ? `delivered ${webhook.last_success_at}` : "nothing delivered yet",
    webhook.last_failure_at ? `FAILED ${webhook.last_failure_at}: ${webhook.last_failure}` : "no failures",
  ].join("  ");

/** `arbeit notify`: the project's outgoing webhooks. */
export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const { values, positionals } = commandFlags(
    argv,
    { events: { type: "string" }, "allow-private": { type: "boolean" } } as const,
    USAGE,
    true,
  );
  const [action, ...rest] = positionals;
  if (action === undefined) throw usage("Say what to do: arbeit notify add | list | remove.");
  if (!["add", "list", "remove"].includes(action))
    throw usage(`There is no "arbeit notify ${action}"; use add, list or remove.`);
  if (action !== "add" && values.events !== undefined) throw usage(`--events goes with "arbeit notify add" only.`);
  if (action !== "add" && values["allow-private"]) throw usage(`--allow-private goes with "arbeit notify add" only.`);
  if (action === "list" ? rest.length > 0 : rest.length !== 1)
    throw usage(
      action === "list" ? `Unexpected argument "${rest[0]}".` : `Name one ${action === "add" ? "URL" : "webhook id"}.`,
    );

  const json = wantsJson(options.json);
  let service: Awaited<ReturnType<typeof openProject>> | undefined;
  try {
    service = await openProject({ cwd: process.cwd(), db: options.db ?? process.env.ARBEIT_DB });
    const store = service.store as unknown as SqlStore;
    if (action === "add") {
      const kinds = values.events
        ?.split(",")
        .map((kind) => kind.trim())
        .filter(Boolean);
      const { webhook, secret } = await addWebhook(store, rest[0]!, kinds, {
        allowPrivate: values["allow-private"] === true,
      });
      const notice =
        "The signing secret is shown only once: give it to the receiver now. Deliveries are made while `arbeit ui` or `arbeit serve` runs.\n";
      if (json) {
        write(2, notice);
        return printEnvelope({ success: true, data: { webhook, secret } }, true);
      }
      write(1, `${secret}\n`);
      write(2, `Webhook ${forHuman(webhook)}\n${notice}`);
      return 0;
    }
    if (action === "list") {
      const webhooks = await listWebhooks(store);
      if (json) return printEnvelope({ success: true, data: { webhooks } }, true);
      write(
        1,
        webhooks.length === 0
          ? "No webhooks yet: arbeit notify add <url>.\n"
          : `${webhooks.map(forHuman).join("\n")}\n`,
      );
      return 0;
    }
    await removeWebhook(store, rest[0]!);
    if (json) return printEnvelope({ success: true, data: { removed: rest[0] } }, true);
    write(1, `Removed ${rest[0]}.\n`);
    return 0;
  } catch (error) {
    return printEnvelope(failure(error), json);
  } finally {
    await service?.close();
  }
}
