import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { ArbeitError } from "../domain/errors.js";

/**
 * Tokens for services, kept in the user's own config (never in a project, which is shared and
 * may be committed), one per service origin: `{"<origin>": {"token": "arb_..."}}`, mode 0600.
 * ARBEIT_TOKEN, when set, is used instead.
 */
type Credentials = Record<string, { token: string; ca?: string }>;

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

/**
 * The folder the credentials file lives in, made private (0700) if missing. An existing one must
 * be a real folder of this user that no one else may write to: whoever can write there can plant
 * a symlink where the file or its scratch copy goes and have the token written through it.
 */
function privateFolder(folder: string): void {
  // Whatever is in the folder's place (a symlink to nowhere, say) is judged below, never made into a folder.
  if (lstatSync(folder, { throwIfNoEntry: false }) === undefined) mkdirSync(folder, { recursive: true, mode: 0o700 });
  const stats = lstatSync(folder);
  const refused = (why: string) =>
    new ArbeitError("UNAUTHORIZED", `${folder} ${why}; no token was stored.`, {
      suggestions: [`Make ${folder} a folder of your own that only you may write to (chmod 700), then retry.`],
      details: { path: folder },
    });
  if (stats.isSymbolicLink()) throw refused("is a symbolic link");
  if (!stats.isDirectory()) throw refused("is not a folder");
  if (process.getuid && stats.uid !== process.getuid()) throw refused("belongs to another user");
  if ((stats.mode & 0o022) !== 0) throw refused("may be written to by other users");
}

/**
 * Writes the whole file anew, readable by its owner alone, and swaps it in. The scratch copy has a
 * name no one can guess and is created only where nothing is (O_EXCL), never through a symlink.
 */
function writeCredentials(file: string, credentials: Credentials): void {
  privateFolder(dirname(file));
  if (lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink())
    throw new ArbeitError("UNAUTHORIZED", `${file} is a symbolic link; no token is written through it.`, {
      suggestions: [`Remove the link ${file} (a token is kept in a file of its own there), then retry.`],
      details: { path: file },
    });
  const scratch = `${file}.${Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(8))).toString("hex")}.tmp`;
  const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY } = constants;
  const fd = openSync(scratch, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    // The mode given to open is masked by the umask; the token file must be 0600 whatever it is.
    fchmodSync(fd, 0o600);
    writeFileSync(fd, `${JSON.stringify(credentials, null, 2)}\n`);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(scratch, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(scratch, file);
}

/**
 * The CA file `arbeit login URL --ca FILE` recorded for the service at `url` (absolute), if any:
 * for a checkout whose project names none, or a process given ARBEIT_URL.
 */
export function storedCa(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const entry = readCredentials(credentialsFile(env))[originOf(url)];
  return typeof entry?.ca === "string" ? entry.ca : undefined;
}

export function storeToken(
  url: string,
  token: string,
  env: NodeJS.ProcessEnv = process.env,
  ca: string | undefined = undefined,
): string {
  const file = credentialsFile(env);
  writeCredentials(file, { ...readCredentials(file), [originOf(url)]: ca === undefined ? { token } : { token, ca } });
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
