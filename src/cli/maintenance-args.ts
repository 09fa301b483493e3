import { commandFlags } from "./command-flags.js";
import { UsageError } from "./usage-error.js";

/** Flags and positionals of a maintenance command; a flag it does not know is a usage error (exit 2). */
export function maintenanceArgs(
  argv: string[],
  spec: { flags: string[]; positionals: { min: number; max: number } },
  usage: string,
): { flags: Set<string>; positionals: string[] } {
  const parsed = commandFlags(
    argv,
    Object.fromEntries(spec.flags.map((flag) => [flag, { type: "boolean" as const }])),
    usage,
    true,
  );
  const { positionals } = parsed;
  if (positionals.length < spec.positionals.min) throw new UsageError("Missing argument.", usage);
  if (positionals.length > spec.positionals.max)
    throw new UsageError(`Unexpected argument ${JSON.stringify(positionals[spec.positionals.max])}.`, usage);
  const flags = new Set(Object.keys(parsed.values).filter((key) => parsed.values[key] === true));
  return { flags, positionals };
}
