import type { Envelope } from "../domain/envelope.js";
import { ArbeitError } from "../domain/errors.js";
import { projectRelative } from "../domain/paths.js";
import { postCall } from "./client.js";
import { tokenFor } from "./credentials.js";
import type { ServiceTarget } from "./target.js";

/**
 * Tool arguments that are file paths, made relative to the local project root before they leave
 * the machine, by the rule the tools apply locally: an absolute path inside the project becomes
 * relative to its root; any other stays as written. The tasks_for_file query's file_path is the one.
 */
export function localPathsRelative(tool: string, args: unknown, root: string): unknown {
  const value = args as { query?: unknown; params?: { file_path?: unknown } } | null;
  if (tool !== "arbeit_query" || value?.query !== "tasks_for_file" || typeof value.params?.file_path !== "string")
    return args;
  const relative = projectRelative(root, value.params.file_path);
  return relative === null ? args : { ...value, params: { ...value.params, file_path: relative } };
}

/**
 * arbeit_init where the tasks are behind a service: there is nothing to make, and a local store
 * would take this checkout's work where nobody sees it. ALREADY_INITIALIZED, saying to log in
 * when there is no token yet.
 */
export function serviceInitRefusal(target: ServiceTarget, env: NodeJS.ProcessEnv = process.env): ArbeitError {
  let token: string | undefined;
  try {
    token = tokenFor(target.url, env);
  } catch {}
  const named = target.from === "ARBEIT_URL" ? "ARBEIT_URL names it" : `named in ${target.file ?? ".arbeit/"}`;
  return new ArbeitError(
    "ALREADY_INITIALIZED",
    `This project uses the Arbeit service at ${target.url} (${named}); its tasks are there, so no local store is made.`,
    {
      suggestions: [
        token === undefined
          ? `Run \`arbeit login ${target.url}\` with a token from the service's administrator (or set ARBEIT_TOKEN), then arbeit_resume.`
          : "Nothing to set up: call arbeit_resume.",
      ],
      details: { path: target.url, cause: "service_project", url: target.url, token: token !== undefined },
    },
  );
}

/**
 * One tool call sent to the service: one HTTP request, its envelope. A default list (--list /
 * ARBEIT_LIST) goes with it: the service applies it as the caller's list, as a local call does.
 */
export async function remoteCall(
  target: ServiceTarget,
  tool: string,
  args: unknown,
  caller: { session?: string | undefined; parents?: readonly string[] | undefined; list?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<Envelope> {
  if (tool === "arbeit_init") return { success: false, error: serviceInitRefusal(target, env).toBody() };
  const { session, list } = caller;
  const parents = caller.parents?.length ? caller.parents : undefined;
  return postCall(target, { tool, args: localPathsRelative(tool, args, target.root), session, parents, list }, env);
}
