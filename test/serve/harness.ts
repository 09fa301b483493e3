import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Page } from "playwright-core";
import { version } from "../../src/service/release.js";
import { ARBEIT_SETTINGS, CLI, runCli } from "../helpers/cli.js";
import type { UiProject } from "../ui/harness.js";

/** This checkout's release, which its clients send as Arbeit-Version. */
export const RELEASE = version();

/** A running `arbeit serve` process, started by a test and stopped by it. */
export interface Service {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far (the request log). */
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) and waits for the exit: its code, or the signal that killed it. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Starts `arbeit serve --port 0` in the project (with this checkout's CLI, or `cli`); resolves
 * once it printed its URL.
 */
export function startService(project: UiProject, args: string[] = [], cli = CLI): Promise<Service> {
  const env: Record<string, string | undefined> = { ...process.env, ...project.env };
  for (const key of ARBEIT_SETTINGS) if (!project.env[key]) delete env[key];
  const child = spawn(process.execPath, [cli, "serve", "--port", "0", ...args], {
    cwd: project.dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => (err += chunk));
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const result = await exited;
      clearTimeout(timer);
      return result;
    }
    return exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop("SIGKILL");
      reject(new Error(`arbeit serve printed no URL within 20 s.\nstdout: ${out}\nstderr: ${err}`));
    }, 20_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const newline = out.indexOf("\n");
      if (newline < 0) return;
      clearTimeout(timer);
      resolve({ url: out.slice(0, newline).trim(), child, stderr: () => err, stop });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`arbeit serve exited (${code}) before printing its URL.\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

/** Makes a token with the real CLI; returns its secret. */
export async function makeToken(project: UiProject, args: string[]): Promise<string> {
  const result = await runCli(["token", "create", ...args, "--json"], { cwd: project.dir, env: project.env });
  if (result.code !== 0)
    throw new Error(`arbeit token create ${args.join(" ")} failed: ${result.stdout}${result.stderr}`);
  return result.json.data.secret;
}

export interface HttpAnswer {
  status: number;
  body: any;
  headers: Headers;
}

/** POST `path` with the token (if any) and a JSON body: the HTTP status and the envelope. */
async function apiPost(
  service: Service,
  path: string,
  token: string | undefined,
  body: unknown,
  headers: Record<string, string>,
): Promise<HttpAnswer> {
  const response = await fetch(`${service.url}${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

/** POST /api/call with the token (if any): the HTTP status and the envelope. */
export const apiCall = (
  service: Service,
  token: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
) => apiPost(service, "/api/call", token, body, headers);

/** POST /api/hook with the token, naming this release as Arbeit's own clients do: the HTTP status and the envelope. */
export const apiHook = (service: Service, token: string, body: unknown, headers: Record<string, string> = {}) =>
  apiPost(service, "/api/hook", token, body, { "Arbeit-Version": RELEASE, ...headers });

/** The body of a UserPromptSubmit hook step in `session` whose prompt is `text`. */
export const promptStep = (session: string, text: string) => ({
  hook: "user-prompt-submit",
  session,
  input: { prompt: { text, chars: text.length } },
});

/** A real MCP client over Streamable HTTP, connected to the service's /mcp with the token. */
export async function mcpClient(service: Service, token: string, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } },
  });
  const client = new Client({ name: "arbeit-serve-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    transport,
    /** The tool's envelope, from structuredContent. */
    async call(tool: string, args: Record<string, unknown> = {}): Promise<any> {
      const result = (await client.callTool({ name: tool, arguments: args })) as { structuredContent?: unknown };
      return result.structuredContent;
    },
    close: () => client.close(),
  };
}

/** Why certificates cannot be made here (openssl is not on PATH), or undefined when they can. */
export const opensslMissing = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "openssl is not on PATH";
  }
})();

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl in `dir`. */
export function selfSigned(dir: string): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...["-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost"],
      ...["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
    ],
    { stdio: "ignore" },
  );
  return { cert, key };
}

/** Opens `path` of the service in a page and signs in there with `secret`, as a person would. */
export async function signIn(page: Page, service: Service, secret: string, path = "/board"): Promise<void> {
  await page.goto(`${service.url}${path}`);
  const form = page.locator('[data-view="sign-in"]');
  await form.getByLabel("Token").fill(secret);
  await form.getByRole("button", { name: "Sign in" }).click();
}
