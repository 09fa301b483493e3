import { readFileSync, statSync } from "node:fs";
import { ArbeitError } from "../domain/errors.js";

/**
 * Trusting an `arbeit serve` service whose certificate a private certificate authority signed.
 * The CA file a project names (`.arbeit/service.json`) or a login records is added to the roots
 * Node trusts by default (and to NODE_EXTRA_CA_CERTS), never in their place, by every Arbeit
 * process of the checkout: the CLI, hooks, `arbeit mcp`, the OpenCode plugin. No environment
 * set-up is needed where the agent host starts.
 */

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates in the PEM file at `path`; `from` names who named it, for the error. */
function certificatesIn(path: string, from: string): string[] {
  const unusable = (why: string) =>
    new ArbeitError("STORE_UNAVAILABLE", `The CA file ${path} (${from}) ${why}; nothing was sent.`, {
      suggestions: [
        "Give the PEM file of the certificate authority that signed the service's certificate (ask the service's administrator), then retry.",
      ],
      details: { path, cause: "service_ca" },
    });
  const stats = statSync(path, { throwIfNoEntry: false });
  if (stats === undefined) throw unusable("does not exist");
  // Reading a FIFO would wait for a writer forever.
  if (!stats.isFile()) throw unusable("is not a regular file");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw unusable(`cannot be read (${(error as NodeJS.ErrnoException).code ?? "unknown error"})`);
  }
  const found = text.match(PEM_CERTIFICATE);
  if (found === null) throw unusable("holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  return found;
}

/** Checks that `path` is a CA file a client can use; the path. For `--ca` flags: INVALID_ARGUMENT. */
export function caFile(path: string, from: string): string {
  try {
    certificatesIn(path, from);
  } catch (error) {
    const known = error as ArbeitError;
    throw new ArbeitError("INVALID_ARGUMENT", known.message.replace("; nothing was sent.", "; nothing was written."), {
      suggestions: known.suggestions,
      details: known.details,
    });
  }
  return path;
}

const roots = new Map<string, string[]>();

/**
 * What an HTTPS request to a service with the CA file `path` trusts: Node's own roots, the file
 * NODE_EXTRA_CA_CERTS names (giving `ca` would otherwise drop it), and the CA file's certificates.
 */
export async function trustedRoots(
  path: string,
  from: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string[]> {
  const extra = env.NODE_EXTRA_CA_CERTS || undefined;
  const key = `${path}\0${extra ?? ""}`;
  const known = roots.get(key);
  if (known) return known;
  const { rootCertificates } = await import("node:tls");
  let fromEnv: string[] = [];
  try {
    fromEnv = extra === undefined ? [] : (readFileSync(extra, "utf8").match(PEM_CERTIFICATE) ?? []);
  } catch {
    // Node itself only warns about an unreadable NODE_EXTRA_CA_CERTS; so does this (by ignoring it).
  }
  const all = [...rootCertificates, ...fromEnv, ...certificatesIn(path, from)];
  roots.set(key, all);
  return all;
}

/** OpenSSL's verdicts on a certificate it does not trust, as Node names them. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_REJECTED",
  "INVALID_CA",
]);
const EXPIRED = new Set(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"]);
const WRONG_NAME = new Set(["ERR_TLS_CERT_ALTNAME_INVALID", "HOSTNAME_MISMATCH"]);

/** How the service's certificate failed, from a connection error; undefined when it is not a certificate problem. */
export function certificateProblem(error: unknown): "untrusted" | "expired" | "wrong_name" | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return undefined;
  if (UNTRUSTED.has(code)) return "untrusted";
  if (EXPIRED.has(code)) return "expired";
  if (WRONG_NAME.has(code)) return "wrong_name";
  return undefined;
}

/**
 * The error for a service whose certificate failed (`problem`, from certificateProblem): what is
 * wrong with it and what to do, never "could not be reached". `ca` is the CA file in use, if any.
 */
export function certificateError(
  url: string,
  problem: "untrusted" | "expired" | "wrong_name",
  code: string,
  ca: string | undefined,
): ArbeitError {
  const origin = new URL(url).origin;
  const message = {
    untrusted: `The Arbeit service's certificate is not trusted (${code}): no certificate authority this process trusts${ca ? `, ${ca} included,` : ""} signed it. Nothing was sent to ${url}.`,
    expired: `The Arbeit service's certificate at ${url} has expired or is not valid yet (${code}); nothing was sent.`,
    wrong_name: `The Arbeit service's certificate does not name ${new URL(url).hostname} (${code}); nothing was sent to ${url}.`,
  }[problem];
  const suggestions = {
    untrusted: [
      ca
        ? `${ca} is not the authority that signed the service's certificate: ask the service's administrator for the right CA file.`
        : "If the service's certificate is signed by your organisation's own certificate authority, name its PEM file for the project (`arbeit init --server URL --ca FILE`, committed in .arbeit/service.json) or for yourself (`arbeit login URL --ca FILE`); docs/team.md#tls-for-clients.",
    ],
    expired: [
      "The service's administrator must renew its certificate (`arbeit serve --tls-cert`); check this machine's clock too.",
    ],
    wrong_name: [
      `Use the address the certificate was made for, or have the administrator issue one that names ${origin}.`,
    ],
  }[problem];
  return new ArbeitError("STORE_UNAVAILABLE", message, {
    suggestions,
    details: { path: url, cause: "service_certificate", problem, tls_code: code },
  });
}
