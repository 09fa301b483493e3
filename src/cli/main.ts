#!/usr/bin/env node
/**
 * The `arbeit` command. Start-up stays light: this file loads only the option parser; each
 * command's code (and zod, and the database driver) is imported when that command runs.
 *
 *   arbeit init
 *   arbeit task create "Fix login" --type bug
 *   arbeit call arbeit_query '{"query": "ready"}'
 */
import { EXTRA_COMMANDS } from "./extra-commands.js";
import { extractGlobalOptions } from "./global-options.js";
import { UsageError } from "./usage-error.js";

async function main(argv: string[]): Promise<number> {
  const { options, rest } = extractGlobalOptions(argv);
  if (options.version) {
    const { version } = await import("./version.js");
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  const [first] = rest;
  if (first === undefined || first === "help") {
    const { generalHelp } = await import("./help.js");
    process.stdout.write(await generalHelp());
    return first === undefined && !options.help ? 2 : 0;
  }
  const extra = EXTRA_COMMANDS[first];
  if (extra) return (await extra.load()).run(rest.slice(1), options);
  const { runToolCommand } = await import("./run-tool-command.js");
  return runToolCommand(rest, options);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(
        `arbeit: ${error.message}\n${error.hint ? `${error.hint}\n` : ""}Run \`arbeit --help\` for usage.\n`,
      );
      process.exitCode = 2;
      return;
    }
    process.stderr.write(
      `arbeit: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
