import { resolve } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { originOf, storeToken } from "../remote/credentials.js";
import { serviceUrl } from "../remote/service-url.js";
import { serviceTarget } from "../remote/target.js";
import { caFile } from "../remote/trust.js";
import { failure } from "../tools/envelope.js";
import { commandFlags } from "./command-flags.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { readStdinSync } from "./stdin.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit login <url> [--token-stdin] [--ca <file>]

Stores a token for the Arbeit service at <url> in your own config
($XDG_CONFIG_HOME/arbeit/credentials.json, else ~/.config/arbeit/credentials.json, readable by
you alone), after checking it with the service: a token it refuses is not stored. The token is
read from standard input with --token-stdin, else asked for on the terminal without echo.
ARBEIT_TOKEN, when set, is used instead of a stored token. Tokens: docs/team.md.

--ca <file> names the PEM file of the certificate authority that signed the service's
certificate (a private CA), recorded with the token for every Arbeit process of yours. A
project's .arbeit/service.json may name one too; it is used first. TLS: docs/team.md.
`;

/** The CA file this checkout's project names for the service at `url`, if it names one for that service. */
function projectCa(url: string): string | undefined {
  try {
    const target = serviceTarget({ cwd: process.cwd() });
    return target?.ca !== undefined && originOf(target.url) === originOf(url) ? target.ca : undefined;
  } catch {
    // A damaged project file is said by every other command; logging in does not need it.
    return undefined;
  }
}

/** Reads a line from the terminal without showing what is typed. */
async function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  write(2, question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  let typed = "";
  try {
    return await new Promise<string>((resolve, reject) => {
      stdin.on("data", (chunk: string) => {
        for (const char of chunk) {
          if (char === "\r" || char === "\n") return resolve(typed);
          // Ctrl-C or Ctrl-D: nothing is stored.
          if (char === "\u0003" || char === "\u0004") return reject(new UsageError("No token was given."));
          if (char === "\u007f" || char === "\b") typed = typed.slice(0, -1);
          else typed += char;
        }
      });
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    write(2, "\n");
  }
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const parsed = commandFlags(argv, { "token-stdin": { type: "boolean" }, ca: { type: "string" } }, USAGE, true);
  const { positionals } = parsed;
  if (positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0 ? "Missing argument." : `Unexpected argument ${JSON.stringify(positionals[1])}.`,
      USAGE,
    );
  const stdinToken = parsed.values["token-stdin"] === true;
  if (!stdinToken && !process.stdin.isTTY)
    throw new UsageError(
      "Give the token on standard input with --token-stdin (there is no terminal to ask on).",
      USAGE,
    );
  try {
    const url = serviceUrl(positionals[0]!, "The service URL");
    const given = parsed.values.ca;
    const ca = given === undefined ? undefined : caFile(resolve(given), "--ca");
    const token = (stdinToken ? readStdinSync() : await promptHidden(`Token for ${url}: `)).trim();
    if (token === "")
      throw new ArbeitError("INVALID_ARGUMENT", "The token is empty; nothing was stored.", {
        suggestions: ["Pass the token the service's administrator made with `arbeit token create` (docs/team.md)."],
      });
    // A read the token may always make: a refused token fails here, before anything is stored.
    const { send } = await import("../remote/client.js");
    await send({ url, ca: ca ?? projectCa(url) }, token, {
      tool: "arbeit_query",
      args: { query: "tasks", params: { limit: 1 } },
    });
    const file = storeToken(url, token, process.env, ca);
    return printEnvelope(
      { success: true, data: { service: originOf(url), stored_in: file, ...(ca ? { ca } : {}) } },
      wantsJson(options.json),
    );
  } catch (error) {
    return printEnvelope(failure(error), wantsJson(options.json));
  }
}
