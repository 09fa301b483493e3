import { type ParseArgsConfig, parseArgs } from "node:util";
import { flagGuess } from "./global-options.js";
import { UsageError } from "./usage-error.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * A command's own flags (and positionals, when it takes any), parsed strictly: a flag it does not
 * know is a usage error (exit 2) that guesses the flag meant.
 */
export function commandFlags<T extends Options>(
  argv: string[],
  options: T,
  usage: string,
  allowPositionals = false,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: boolean; strict: true }>> {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (error) {
    const flag = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    if ((error as NodeJS.ErrnoException).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag)
      throw new UsageError(
        `Unknown flag ${flag}.${flagGuess(
          flag,
          Object.keys(options).map((name) => `--${name}`),
        )}`,
        usage,
      );
    throw new UsageError((error as Error).message.split("\n")[0]!, usage);
  }
}
