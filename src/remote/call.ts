import type { Envelope } from "../domain/envelope.js";
import { projectRelative } from "../domain/paths.js";
import { postCall } from "./client.js";
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
  const { session, list } = caller;
  const parents = caller.parents?.length ? caller.parents : undefined;
  return postCall(target.url, { tool, args: localPathsRelative(tool, args, target.root), session, parents, list }, env);
}
