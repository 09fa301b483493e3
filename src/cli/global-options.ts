import { listIdProblem, nameProblem } from "../domain/identity.js";
import { redactSecrets } from "../domain/secrets.js";
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

/** Who acts, as the flags or ARBEIT_* variables name them. */
export interface CallerNames {
  session?: string;
  agent?: string;
  list?: string;
}

const CALLER_SETTINGS = [
  { key: "session", flag: "--session", variable: "ARBEIT_SESSION", problemOf: nameProblem },
  { key: "agent", flag: "--agent", variable: "ARBEIT_AGENT", problemOf: nameProblem },
  { key: "list", flag: "--list", variable: "ARBEIT_LIST", problemOf: listIdProblem },
] as const;

/**
 * --session, --agent and --list, else ARBEIT_SESSION, ARBEIT_AGENT and ARBEIT_LIST, checked by the
 * rules the tools apply to the same names (a list must be one a `list_id` argument can name): a
 * bad one is a usage error naming the rule, before anything is written under it.
 */
export function callerNames(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): CallerNames {
  const names: CallerNames = {};
  for (const { key, flag, variable, problemOf } of CALLER_SETTINGS) {
    const fromFlag = options[key];
    const value = fromFlag ?? envSetting(env, variable);
    if (value === undefined) continue;
    const problem = problemOf(value);
    if (problem)
      throw new UsageError(
        `${fromFlag !== undefined ? flag : variable} ${problem}: ${JSON.stringify(redactSecrets(value))}.`,
      );
    names[key] = value;
  }
  return names;
}
