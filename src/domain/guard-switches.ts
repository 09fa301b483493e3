import { ArbeitError } from "./errors.js";
import { ENFORCE_KEY, warnsOnly } from "./reservations.js";

/**
 * Switches kept in project memory that change a guard for everyone on the project. Turning one
 * weakens what protects other sessions' work, so it is a person's decision: an agent's token may
 * not write it (set, delete, or a merge that keeps or folds it), and every write to one is logged
 * with the guard it switches and whether it now weakens it, beside who wrote it.
 */
export interface GuardSwitch {
  /** The project memory key. */
  key: string;
  /** The guard it switches, in words. */
  guard: string;
  /** Whether `value` (undefined: the key is unset) weakens the guard. */
  weakens(value: unknown): boolean;
}

export const GUARD_SWITCHES: readonly GuardSwitch[] = [
  {
    key: ENFORCE_KEY,
    guard: "file reservations (edits and commits of files another session reserved)",
    weakens: warnsOnly,
  },
];

/** The switch a project memory key is, if it is one. */
export function guardSwitch(scope: string | undefined, key: unknown): GuardSwitch | undefined {
  if ((scope ?? "project") !== "project") return undefined;
  return GUARD_SWITCHES.find((entry) => entry.key === key);
}

/** The switches a memory call would write: its key, and for a merge every key it folds. */
export function switchesWritten(call: {
  action?: unknown;
  scope?: unknown;
  key?: unknown;
  keys?: unknown;
}): GuardSwitch[] {
  if (call.action !== "set" && call.action !== "delete" && call.action !== "merge") return [];
  const keys = [call.key, ...(call.action === "merge" && Array.isArray(call.keys) ? call.keys : [])];
  const scope = typeof call.scope === "string" ? call.scope : undefined;
  return [...new Set(keys.map((key) => guardSwitch(scope, key)).filter((found) => found !== undefined))];
}

/** Why an agent's token may not make this memory call (it writes a guard switch), or undefined. */
export function guardSwitchRefusal(call: Parameters<typeof switchesWritten>[0]): ArbeitError | undefined {
  const [written] = switchesWritten(call);
  if (!written) return undefined;
  return new ArbeitError(
    "FORBIDDEN",
    `The project memory key ${JSON.stringify(written.key)} switches a guard for everyone (${written.guard}): only a person's token may write it. Nothing was written.`,
    {
      details: { tool: "arbeit_memory", key: written.key },
      suggestions: [
        "Ask a person to change it if the team should work that way; keep your own notes under another key.",
      ],
    },
  );
}

/** What a memory event adds for a write of `key` to `value` (undefined: deleted), when the key is a switch. */
export function switchLogged(scope: string, key: string, value: unknown): Record<string, unknown> {
  const found = guardSwitch(scope, key);
  return found ? { guard_switch: { guard: found.guard, weakens: found.weakens(value) } } : {};
}
