#!/usr/bin/env node
/**
 * The `arbeit` command. Start-up stays light: this file loads only the option parser; each
 * command's code (and zod, and the database driver) is imported when that command runs.
 *
 *   arbeit init
 *   arbeit task create "Fix login" --type bug
 *   arbeit call arbeit_query '{"query": "ready"}'
 */
import { write } from "./direct-write.js";
import { EXTRA_COMMANDS } from "./extra-commands.js";
import { extractGlobalOptions, flagGuess } from "./global-options.js";
import { terminalSafe } from "./terminal-text.js";
import { UsageError } from "./usage-error.js";

/**
 * Set by the bundled CLI's loader when this is the lean core bundle: runs the call in the full
 * bundle instead (for heavy commands, see ExtraCommand.heavy). Undefined everywhere else.
 */
declare const __arbeitFull: (() => void) | undefined;

async function main(argv: string[]): Promise<number> {
  const { options, rest } = extractGlobalOptions(argv);
  if (options.version) {
    const { version } = await import("../service/release.js");
    write(1, `${version()}\n`);
    return 0;
  }
  // `arbeit help task create` is `arbeit task create --help`.
  const words = rest[0] === "help" ? rest.slice(1) : rest;
  if (rest[0] === "help") options.help = true;
  const [first] = words;
  if (first === undefined) {
    const { generalHelp } = await import("./help.js");
    if (options.help) {
      write(1, generalHelp());
      return 0;
    }
    throw new UsageError("Name a command.", generalHelp().trimEnd());
  }
  // Options come anywhere on the line, so a dash where the command belongs is an option nobody knows.
  if (first.startsWith("-")) throw new UsageError(`Unknown flag ${first}.${flagGuess(first)}`);
  // Own keys only: `arbeit constructor` is an unknown command, not what every object inherits.
  const extra = Object.hasOwn(EXTRA_COMMANDS, first) ? EXTRA_COMMANDS[first] : undefined;
  if (extra?.heavy && typeof __arbeitFull === "function") {
    __arbeitFull();
    // The full bundle now owns this call and sets the exit code; this one stays silent.
    return new Promise<number>(() => {});
  }
  if (extra) {
    try {
      return await (await extra.load()).run(words.slice(1), options);
    } catch (error) {
      if (error instanceof UsageError) error.command ??= first;
      throw error;
    }
  }
  const { runToolCommand } = await import("./run-tool-command.js");
  return runToolCommand(words, options);
}

// A stream write to a closed pipe fails later, as an 'error' event nobody listens for; end as
// quietly as the direct writes do (output.ts) instead of printing a stack trace.
process.on("uncaughtException", (error) => {
  if ((error as NodeJS.ErrnoException).code === "EPIPE") process.exit(0);
  write(2, `arbeit: unexpected failure: ${error.stack ?? error.message}\n`);
  process.exit(1);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if ((error as NodeJS.ErrnoException | null)?.code === "EPIPE") process.exit(0);
    if (error instanceof UsageError) {
      const help = error.command ? `arbeit ${error.command} --help` : "arbeit --help";
      // A usage message may quote an argument as typed, control characters and all.
      write(
        2,
        terminalSafe(`arbeit: ${error.message}\n${error.hint ? `${error.hint}\n` : ""}Run \`${help}\` for usage.\n`, {
          newlines: true,
        }),
      );
      process.exitCode = 2;
      return;
    }
    write(
      2,
      terminalSafe(
        `arbeit: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
        { newlines: true },
      ),
    );
    process.exitCode = 1;
  },
);
