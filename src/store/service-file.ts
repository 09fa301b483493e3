import { readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { ArbeitError } from "../domain/errors.js";
import { SERVICE_FILE } from "../domain/project-layout.js";
import { serviceUrl } from "../remote/service-url.js";

/**
 * `.arbeit/service.json`: the Arbeit service a project uses, in a file the repository carries, so
 * that a fresh clone sends its calls there (and asks for `arbeit login`) instead of making a store
 * of its own. `arbeit init --server URL [--ca FILE]` writes it:
 *
 *   {"url": "https://arbeit.example.com", "ca": "certs/company-ca.pem", "edit_check": "fail-closed"}
 *
 * `url` is required; `ca`, a PEM file of the certificate authority that signed the service's
 * certificate, is relative to the project root (the folder holding `.arbeit/`) unless absolute.
 * A token never belongs here: a file holding one is refused. Other keys are settings of newer
 * Arbeit versions and are left alone. This module is the one place that reads the file: a field
 * added to it is parsed and checked here.
 */
export interface ServiceFile {
  /** The service's address, checked as `arbeit init --server` checks it. */
  url: string;
  /** The CA file as an absolute path, when the project names one. */
  ca?: string | undefined;
  /** Where the file is. */
  path: string;
  /**
   * What the edit check before a file tool answers while the service cannot be asked: "fail-open"
   * (the default) lets the edit through unchecked, "fail-closed" refuses it (docs/team.md).
   */
  edit_check: "fail-open" | "fail-closed";
}

/** What `arbeit init --server` writes: the URL, and the CA file as the person gave it. */
export interface ServiceFileContent {
  url: string;
  ca?: string | undefined;
}

/** Keys whose value would be a credential: refused wherever they are in the file. */
const SECRET_KEYS = new Set(["token", "password", "secret", "authorization", "api_key", "apikey"]);

/** The file in the `.arbeit/` folder `folder`, or undefined when there is none. */
export function readServiceFile(folder: string): ServiceFile | undefined {
  const path = join(folder, SERVICE_FILE);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) return undefined;
  const invalid = (why: string, field?: string) =>
    new ArbeitError("STORE_DAMAGED", `${path} ${why}, so which Arbeit service this project uses is unknown.`, {
      suggestions: [
        `Fix the file in the repository: {"url": "https://<service>", "ca": "<optional CA file, relative to the project root>"}, no token (docs/team.md).`,
      ],
      details: { path, cause: "service_file", ...(field ? { field } : {}) },
    });
  // Reading a FIFO would wait for a writer forever.
  if (!stats.isFile()) throw invalid("is not a regular file");
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw invalid("is not valid JSON");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw invalid("is not a JSON object");
  const file = parsed as Record<string, unknown>;
  const secret = Object.keys(file).find((key) => SECRET_KEYS.has(key.toLowerCase()));
  if (secret !== undefined)
    throw invalid(
      `holds "${secret}"; a token is never committed (each person keeps theirs with \`arbeit login\`)`,
      secret,
    );
  if (typeof file.url !== "string") throw invalid('has no "url" string', "url");
  let url: string;
  try {
    url = serviceUrl(file.url, '"url"');
  } catch (error) {
    throw invalid(`has a bad "url" (${(error as Error).message})`, "url");
  }
  if (file.ca !== undefined && (typeof file.ca !== "string" || file.ca.trim() === ""))
    throw invalid('has a "ca" that is not a file name', "ca");
  if (file.edit_check !== undefined && file.edit_check !== "fail-open" && file.edit_check !== "fail-closed")
    throw invalid('has an "edit_check" other than "fail-open" or "fail-closed"', "edit_check");
  const root = dirname(folder);
  const ca = typeof file.ca === "string" ? (isAbsolute(file.ca) ? file.ca : resolve(root, file.ca)) : undefined;
  return { url, ca, path, edit_check: file.edit_check === "fail-closed" ? "fail-closed" : "fail-open" };
}

/** Writes the file anew (the project root's `.arbeit/` folder is `folder`). */
export function writeServiceFile(folder: string, content: ServiceFileContent): void {
  const written = content.ca === undefined ? { url: content.url } : { url: content.url, ca: content.ca };
  writeFileSync(join(folder, SERVICE_FILE), `${JSON.stringify(written, null, 2)}\n`);
}
