import { parseArgs } from "node:util";
import { flagGuess } from "./global-options.js";
import { UsageError } from "./usage-error.js";

/** Flags and positionals of a maintenance command; a flag it does not know is a usage error (exit 2). */
export function maintenanceArgs(
  argv: string[],
  spec: { flags: string[]; positionals: { min: number; max: number } },
  usage: string,
): { flags: Set<string>; positionals: string[] } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(spec.flags.map((flag) => [flag, { type: "boolean" as const }])),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const unknown = (error as NodeJS.ErrnoException).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION";
    const flag = /'(-[^']*)'/.exec((error as Error).message)?.[1];
    if (unknown && flag) {
      const own = spec.flags.map((name) => `--${name}`);
      throw new UsageError(`Unknown flag ${flag}.${flagGuess(flag, own)}`, usage);
    }
    throw new UsageError((error as Error).message.split("\n")[0]!, usage);
  }
  const { positionals } = parsed;
  if (positionals.length < spec.positionals.min) throw new UsageError("Missing argument.", usage);
  if (positionals.length > spec.positionals.max)
    throw new UsageError(`Unexpected argument ${JSON.stringify(positionals[spec.positionals.max])}.`, usage);
  const flags = new Set(Object.keys(parsed.values).filter((key) => parsed.values[key] === true));
  return { flags, positionals };
}
