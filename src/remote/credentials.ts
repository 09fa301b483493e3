import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ArbeitError } from "../domain/errors.js";

/**
 * Tokens for services, kept in the user's own config (never in a project, which is shared and
 * may be committed), one per service origin: `{"<origin>": {"token": "arb_..."}}`, mode 0600.
 * ARBEIT_TOKEN, when set, is used instead.
 */
type Credentials = Record<string, { token: string }>;

export function credentialsFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "arbeit", "credentials.json");
}

/** Tokens are per server, not per path on it: what the browser would call its origin. */
export const originOf = (url: string): string => new URL(url).origin;

function readCredentials(file: string): Credentials {
  const stats = statSync(file, { throwIfNoEntry: false });
  if (stats === undefined) return {};
  const damaged = (why: string) =>
    new ArbeitError("UNAUTHORIZED", `${file} ${why}, so no stored token can be read from it.`, {
      suggestions: [
        'Make it a JSON object again, {"<service origin>": {"token": "arb_..."}}, or set ARBEIT_TOKEN, and retry.',
      ],
      details: { path: file },
    });
  // Reading a FIFO would wait for a writer forever.
  if (!stats.isFile()) throw damaged("is not a regular file");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw damaged(`cannot be read (${(error as NodeJS.ErrnoException).code ?? "unknown error"})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw damaged("is not valid JSON");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw damaged("is not a JSON object");
  return parsed as Credentials;
}

/** The token for the service at `url`: ARBEIT_TOKEN, else the stored one, else undefined. */
export function tokenFor(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.ARBEIT_TOKEN) return env.ARBEIT_TOKEN;
  const entry = readCredentials(credentialsFile(env))[originOf(url)];
  return typeof entry?.token === "string" ? entry.token : undefined;
}

/** Writes the whole file anew, readable by its owner alone, and swaps it in. */
function writeCredentials(file: string, credentials: Credentials): void {
  const folder = join(file, "..");
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const scratch = `${file}.${process.pid}.tmp`;
  writeFileSync(scratch, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFileSync is masked by the umask; the token file must be 0600 whatever it is.
  chmodSync(scratch, 0o600);
  renameSync(scratch, file);
}

export function storeToken(url: string, token: string, env: NodeJS.ProcessEnv = process.env): string {
  const file = credentialsFile(env);
  writeCredentials(file, { ...readCredentials(file), [originOf(url)]: { token } });
  return file;
}

/** Forgets the token for `url`; whether there was one. */
export function forgetToken(url: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const file = credentialsFile(env);
  const credentials = readCredentials(file);
  const origin = originOf(url);
  if (!Object.hasOwn(credentials, origin)) return false;
  delete credentials[origin];
  writeCredentials(file, credentials);
  return true;
}
