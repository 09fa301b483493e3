import { fromDirectory } from "../domain/paths.js";
import { ENFORCE_KEY, guardAnswer, holderOf } from "../domain/reservations.js";
import { enforcement } from "../remote/edit-check.js";
import { changedFiles } from "../service/git-commit.js";
import { failure } from "../tools/envelope.js";
import { envSetting, type GlobalOptions } from "./global-options.js";
import { printEnvelope, wantsJson, write } from "./output.js";
import { terminalSafe } from "./terminal-text.js";
import { cliToolContext } from "./tool-context.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit check-edit <path>... | --staged

May this session edit these files now? Asks the project's file reservations (arbeit_task_claim
paths): data.decision is "allow", "warn" (another session holds one shared) or "deny" (another
live session holds one exclusively), with the reason: who holds it, for which task, until when,
and what to do instead. A project whose memory key ${ENFORCE_KEY} is "warn" enforces
reservations as warnings only: what would be denied is "warn". Exit 0 unless denied (1), or on
an error (1).
--staged  checks the files staged in the git repository around the current directory (what
          \`git commit\` would record; a file moved away or deleted by its old path too): the
          pre-commit guard \`arbeit setup git\` installs runs this. It prints only a refusal,
          or under warn-only the warning, naming the holders (on stderr), and lets the commit
          through when it cannot ask (no store found, a database down).
The session is --session / ARBEIT_SESSION, else Claude Code's CLAUDE_CODE_SESSION_ID; without one
every reservation is another session's.
`;

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    write(1, USAGE);
    return 0;
  }
  const staged = argv.includes("--staged");
  const given = argv.filter((word) => word !== "--staged");
  const unknown = given.find((word) => word.startsWith("--"));
  if (unknown) throw new UsageError(`Unknown option ${JSON.stringify(unknown)} for check-edit.`, USAGE);
  if (staged === given.length > 0) throw new UsageError("Name the files, or give --staged (not both).", USAGE);
  const ctx = cliToolContext(options);
  const session = ctx.caller.session ?? envSetting(process.env, "CLAUDE_CODE_SESSION_ID") ?? null;
  try {
    const paths = staged ? changedFiles(process.cwd()) : given.map((path) => fromDirectory(process.cwd(), path));
    const service = await ctx.service();
    const caller = { ...ctx.caller, session };
    const { data: check } = await service.checkEdit({ paths }, caller);
    // The project's warn-only switch is read only when something would be refused.
    const answer = guardAnswer(check, check.decision === "deny" ? await enforcement(service, caller) : undefined);
    const data = { ...check, ...answer };
    if (staged && check.decision === "deny") {
      // What a person reads in the terminal where git refused (or, warn-only, made) the commit.
      const holders = check.conflicts
        .filter((c) => c.mode === "exclusive")
        .map((c) => `  ${c.path}: ${holderOf(c)} until ${c.until}`);
      const message =
        answer.decision === "deny"
          ? "arbeit: commit refused: files another session reserved exclusively are staged.\n"
          : `arbeit: warning: files another session reserved exclusively are staged; this project enforces reservations as warnings only (memory key ${ENFORCE_KEY}), so the commit goes ahead.\n`;
      const advice =
        answer.decision === "deny"
          ? "Unstage them (git restore --staged <file>) and commit the rest, or wait until the reservation ends or its holder releases it.\n"
          : "That session may be changing these files too: tell it, or check the merge.\n";
      write(2, terminalSafe(`${message}${[...new Set(holders)].join("\n")}\n${advice}`, { newlines: true }));
    }
    // The guard speaks only when a reservation stands in the way (above); a person asking sees the whole answer.
    if (!staged || options.json) printEnvelope({ success: true, data }, wantsJson(options.json));
    return data.decision === "deny" ? 1 : 0;
  } catch (error) {
    if (!staged) return printEnvelope(failure(error), wantsJson(options.json));
    // A guard that cannot ask (no store here, a database down) never blocks a commit.
    const body = failure(error);
    write(
      2,
      terminalSafe(`arbeit: commit not checked for file reservations: ${body.success ? "" : body.error.message}\n`, {
        newlines: true,
      }),
    );
    return 0;
  } finally {
    await ctx.close();
  }
}
