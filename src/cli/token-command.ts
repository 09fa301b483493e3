import { CI_PREFIX } from "../domain/identity.js";
import { openProject } from "../service/project.js";
import type { SqlStore } from "../store/sql/database.js";
import { actingAgent, expiryFrom, type Token, tokenSelector } from "../team/token-rules.js";
import { createToken, listTokens, revokeTokens } from "../team/tokens.js";
import { failure } from "../tools/envelope.js";
import { commandFlags } from "./command-flags.js";
import type { GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit token create --agent NAME | --person NAME | --ci NAME [--read-only] [--expires 30d|DATE]
       arbeit token list
       arbeit token revoke <id | name>

Tokens let agents and people call \`arbeit serve\` (docs/team.md). Whoever can open this project's
store directly manages them; nothing here goes over the service.

  create    makes a token and prints its secret once: it is stored only as a hash
            --agent NAME   an agent's token: everything done with it is NAME's (the caller picks only a session)
            --person NAME  a person's token: acts as human:NAME, may break claims and answer questions
            --ci NAME      CI's token: an agent's token that acts as ci:NAME and may also finish a
                           task another session holds once its work landed (landed_ref)
            --read-only    may call read-only tools only
            --expires X    stops working after a duration (12h, 30d, 2w) or on a date (2027-01-31)
  list      every token: id, name, kind, access, state, created, expires, last used (never a secret)
  revoke    stops a token (by id) or every live token of a name (by name), at once, open
            MCP sessions included; a name is given as list shows it (erin, human:dana,
            ci:github) or as agent:erin; a bare name an agent and a person share is refused
`;

const usage = (message: string) => new UsageError(message, USAGE, "token");

function parse(argv: string[]) {
  const options = {
    person: { type: "string" },
    ci: { type: "string" },
    "read-only": { type: "boolean" },
    expires: { type: "string" },
  } as const;
  return commandFlags(argv, options, USAGE, true);
}

/**
 * The stored name of a new token: a person's is given bare or as `token list` shows it
 * (human:NAME); CI's is an agent's named ci:NAME, given with or without the prefix.
 */
function newTokenName(agent: string | undefined, person: string | undefined, ci: string | undefined): string {
  if (person !== undefined) return tokenSelector(person).kind === "person" ? tokenSelector(person).name : person;
  if (ci !== undefined) return ci.startsWith(CI_PREFIX) ? ci : `${CI_PREFIX}${ci}`;
  return agent!;
}

const forHuman = (token: Token & { state?: string }) =>
  [
    token.id,
    actingAgent(token),
    token.kind,
    token.read_only ? "read-only" : "read-write",
    token.state ?? "active",
    `created ${token.created_at}`,
    token.expires_at ? `expires ${token.expires_at}` : "no expiry",
    token.last_used_at ? `last used ${token.last_used_at}` : "never used",
  ].join("  ");

/** `arbeit token`: the administrator's commands for the tokens of `arbeit serve`. */
export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const { values, positionals } = parse(argv);
  // --agent is a global option (every command takes it), so it arrives parsed already.
  const agent = options.agent;
  const [action, ...rest] = positionals;
  if (action === undefined) throw usage("Say what to do: arbeit token create | list | revoke.");
  if (!["create", "list", "revoke"].includes(action))
    throw usage(`There is no "arbeit token ${action}"; use create, list or revoke.`);
  const creating = action === "create";
  if (!creating && (agent ?? values.person ?? values.ci ?? values.expires ?? values["read-only"]) !== undefined)
    throw usage(`--agent, --person, --ci, --read-only and --expires go with "arbeit token create" only.`);
  if (action === "revoke" ? rest.length !== 1 : rest.length > 0)
    throw usage(
      action === "revoke" ? "Name one token to revoke: its id or name." : `Unexpected argument "${rest[0]}".`,
    );
  if (creating && [agent, values.person, values.ci].filter((name) => name !== undefined).length !== 1)
    throw usage("Give exactly one of --agent NAME, --person NAME or --ci NAME.");
  if (agent?.startsWith(CI_PREFIX)) throw usage(`An agent's name must not start with "${CI_PREFIX}": use --ci NAME.`);

  const json = wantsJson(options.json);
  let service: Awaited<ReturnType<typeof openProject>> | undefined;
  try {
    service = await openProject({ cwd: process.cwd(), db: options.db ?? process.env.ARBEIT_DB });
    const store = service.store as unknown as SqlStore;
    if (creating) {
      const { token, secret } = await createToken(store, {
        kind: values.person !== undefined ? "person" : "agent",
        name: newTokenName(agent, values.person, values.ci),
        read_only: values["read-only"] === true,
        expires_at: values.expires === undefined ? null : expiryFrom(values.expires, new Date()),
      });
      const notice = "The secret is shown only once: store it now (Arbeit keeps only its hash).\n";
      if (json) {
        write(2, notice);
        return printEnvelope({ success: true, data: { token, secret } }, true);
      }
      write(1, `${secret}\n`);
      write(2, `Token ${forHuman(token)}\n${notice}`);
      return 0;
    }
    if (action === "list") {
      const tokens = await listTokens(store);
      if (json) return printEnvelope({ success: true, data: { tokens } }, true);
      write(
        1,
        tokens.length === 0
          ? "No tokens yet: arbeit token create --agent NAME.\n"
          : `${tokens.map(forHuman).join("\n")}\n`,
      );
      return 0;
    }
    const revoked = await revokeTokens(store, rest[0]!);
    if (json) return printEnvelope({ success: true, data: { revoked } }, true);
    write(1, revoked.map((token) => `Revoked ${token.id} (${actingAgent(token)}).\n`).join(""));
    return 0;
  } catch (error) {
    return printEnvelope(failure(error), json);
  } finally {
    await service?.close();
  }
}
