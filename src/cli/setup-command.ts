import { ArbeitError } from "../domain/errors.js";
import { removeClaude, setupClaude } from "../setup/claude.js";
import { removeGit, setupGit } from "../setup/git.js";
import { SetupError } from "../setup/json-file.js";
import { removeOpencode, setupOpencode } from "../setup/opencode.js";
import { projectDir, type SetupReport } from "../setup/report.js";
import type { GlobalOptions } from "./global-options.js";
import { wantsJson } from "./output.js";
import { terminalSafe } from "./terminal-text.js";
import { UsageError } from "./usage-error.js";

const USAGE = `Usage: arbeit setup claude [--command <cmd>] [--dir <path>]
       arbeit setup opencode [--npm] [--force] [--dir <path>]
       arbeit setup git [--remove] [--dir <path>]
       arbeit setup claude --remove [--command <cmd>] [--dir <path>]
       arbeit setup opencode --remove [--force] [--dir <path>]

claude    adds Arbeit's hooks to .claude/settings.json, its MCP server to .mcp.json and a
          short block of instructions to CLAUDE.md. Hooks and server run the project's own
          arbeit (node_modules/.bin) when it has one, else this installation by absolute
          path; such a hook does nothing, silently, where that program is missing.
          --command <cmd>: run <cmd> instead, in the hooks and the MCP server alike (split
          on spaces), e.g. --command arbeit for a global install
opencode  writes .opencode/plugin/arbeit.js, which loads the installed arbeit package, and
          the block of instructions to AGENTS.md (--npm: list the "arbeit" npm plugin in
          opencode.json instead of the file, for when Arbeit is on the npm registry, which it
          is not yet; --force: replace a plugin file that differs)
git       installs a pre-commit hook in the repository's hooks folder that refuses a commit
          staging files another live session reserved exclusively, naming the holder. A
          pre-commit hook already there is kept beside it as pre-commit.before-arbeit and run
          first; --remove deletes the guard and puts it back.
--remove  takes out what setup added and nothing else: hooks and MCP server whose command is
          one setup writes (--command <cmd>: also those running <cmd>), the plugin file
          when it is the one setup writes (--force: whatever it holds), "arbeit" in
          opencode.json's plugin list, the instruction block. A file setup created and
          left with nothing else in it is deleted; the database (.arbeit/) is kept.
Existing files are merged, never overwritten: every key, hook and server is kept (a hook or
an arbeit server is Arbeit's only when its command is exactly one setup writes), Arbeit's
own entries are pointed at the command above, and running setup twice changes nothing. JSON
files are written with 2-space indentation. The instructions sit between <!-- arbeit:start -->
and <!-- arbeit:end -->: appended when missing, replaced there when they differ, the text around
them untouched. A file that is not valid JSON is refused and no file is written. The Arbeit
database is created in the project if there is none. --dir defaults to the project root.
`;

interface SetupFlags {
  target: "claude" | "opencode" | "git";
  dir?: string;
  command?: string;
  npm: boolean;
  force: boolean;
  remove: boolean;
}

function parse(argv: string[]): SetupFlags {
  const [target, ...rest] = argv;
  if (target !== "claude" && target !== "opencode" && target !== "git") {
    throw new UsageError(target ? `Unknown setup target ${JSON.stringify(target)}.` : "Name what to set up.", USAGE);
  }
  const flags: SetupFlags = { target, npm: false, force: false, remove: false };
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!;
    const [flag, inline] = token.startsWith("--") && token.includes("=") ? token.split(/=(.*)/s) : [token, undefined];
    const value = () => {
      const next = inline ?? rest[++i];
      if (next === undefined || next === "") throw new UsageError(`${flag} needs a value.`, USAGE);
      return next;
    };
    if (flag === "--dir") flags.dir = value();
    else if (flag === "--command" && target === "claude") flags.command = value();
    else if (flag === "--npm" && target === "opencode") flags.npm = true;
    else if (flag === "--force" && target === "opencode") flags.force = true;
    else if (flag === "--remove") flags.remove = true;
    else throw new UsageError(`Unknown option ${JSON.stringify(token)} for setup ${target}.`, USAGE);
  }
  // What to write has no meaning when taking out: refused rather than silently ignored.
  const writing = flags.npm ? "--npm" : undefined;
  if (flags.remove && writing) throw new UsageError(`${writing} does not go with --remove.`, USAGE);
  return flags;
}

function printText(report: SetupReport): void {
  const heading =
    report.mode === "remove"
      ? `Arbeit removed from the ${report.target} setup in ${report.dir}`
      : `Arbeit setup for ${report.target} in ${report.dir}`;
  const lines = report.files.map(
    (file) => `${file.action.padEnd(9)} ${file.path}${file.detail ? `  (${file.detail})` : ""}`,
  );
  const notes = report.notes.map((note) => `note: ${note}\n`).join("");
  // Folder names and notes quoting file contents are shown to a person, on a terminal.
  process.stdout.write(
    terminalSafe(`${heading}\n${lines.join("\n")}\n${notes}`, {
      newlines: true,
    }),
  );
}

export async function run(argv: string[], options: GlobalOptions): Promise<number> {
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const flags = parse(argv);
  const dir = projectDir(process.cwd(), flags.dir);
  try {
    let report: SetupReport;
    if (flags.target === "git") report = flags.remove ? removeGit({ dir }) : setupGit({ dir });
    else if (flags.target === "claude")
      report = flags.remove
        ? removeClaude({ dir, command: flags.command })
        : await setupClaude({ dir, command: flags.command });
    else
      report = flags.remove
        ? removeOpencode({ dir, force: flags.force })
        : await setupOpencode({ dir, npm: flags.npm, force: flags.force });
    if (wantsJson(options.json)) process.stdout.write(`${JSON.stringify({ success: true, data: report })}\n`);
    else printText(report);
    return 0;
  } catch (error) {
    if (!(error instanceof SetupError)) throw error;
    if (wantsJson(options.json)) {
      const refused = new ArbeitError("SETUP_REFUSED", error.message);
      process.stdout.write(`${JSON.stringify({ success: false, error: refused.toBody() })}\n`);
    }
    process.stderr.write(
      terminalSafe(`arbeit: setup ${flags.target}${flags.remove ? " --remove" : ""} refused: ${error.message}\n`, {
        newlines: true,
      }),
    );
    return 1;
  }
}
