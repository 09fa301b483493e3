import { closest } from "./suggest.js";
import { UsageError } from "./usage-error.js";

/** Options every command accepts, anywhere on the line. */
export interface GlobalOptions {
  json: boolean;
  help: boolean;
  version: boolean;
  db?: string;
  session?: string;
  agent?: string;
  list?: string;
}

const VALUED = new Set(["--db", "--session", "--agent", "--list"]);
const GLOBAL_FLAGS = ["--json", "--help", "--version", ...VALUED];

/**
 * " Did you mean --x?" for a flag nobody knows, or "". The command's own flags come first, so a
 * nearer one of those wins over a global option (--lst is --list, --limt is --limit).
 */
export function flagGuess(flag: string, own: readonly string[] = []): string {
  const guess = closest(flag, [...own, ...GLOBAL_FLAGS]);
  return guess ? ` Did you mean ${guess}?` : "";
}

/** Pulls the global options out of argv and returns the rest untouched, in order. */
export function extractGlobalOptions(argv: readonly string[]): { options: GlobalOptions; rest: string[] } {
  const options: GlobalOptions = { json: false, help: false, version: false };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      for (let j = i; j < argv.length; j++) rest.push(argv[j]!);
      break;
    }
    if (token === "--json") options.json = true;
    else if (token === "--help" || token === "-h") options.help = true;
    else if (token === "--version" || token === "-v") options.version = true;
    else {
      const eq = token.indexOf("=");
      const flag = eq === -1 ? token : token.slice(0, eq);
      if (!VALUED.has(flag)) {
        rest.push(token);
        continue;
      }
      let value: string | undefined;
      if (eq !== -1) value = token.slice(eq + 1);
      else {
        value = argv[i + 1];
        i++;
      }
      if (value === undefined || value === "") throw new UsageError(`${flag} needs a value.`);
      options[flag.slice(2) as "db" | "session" | "agent" | "list"] = value;
    }
  }
  return { options, rest };
}

/** An ARBEIT_* (or host) variable's value; an empty variable counts as unset, as in most shells' tools. */
export function envSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name] || undefined;
}
