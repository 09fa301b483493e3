import type { GlobalOptions } from "./global-options.js";

/** Commands that are not tools. Each entry loads its module only when invoked. */
export interface ExtraCommand {
  summary: string;
  /**
   * Pulls in large dependencies (the MCP SDK, host set-up, maintenance). The bundled CLI keeps
   * these out of the bundle every other call loads (scripts/build.mjs), so they stay off the
   * start-up of `arbeit task ...` and friends.
   */
  heavy?: true;
  load: () => Promise<{ run(argv: string[], options: GlobalOptions): Promise<number> }>;
}

export const EXTRA_COMMANDS: Record<string, ExtraCommand> = {
  // The arbeit_batch tool, from a file: its operations do not fit on a command line as flags.
  batch: {
    summary: "Up to 100 writes in one transaction, all or nothing: arbeit batch <file | ->",
    load: () => import("./batch-command.js"),
  },
  call: {
    summary: "Run any tool with JSON arguments: arbeit call <tool_name> '<json>' (- reads stdin)",
    load: () => import("./call-command.js"),
  },
  backup: {
    heavy: true,
    summary: "Copy the database to a new file while agents keep working: arbeit backup <file>",
    load: () => import("./backup-command.js"),
  },
  // Not heavy: hosts and the git pre-commit guard ask it before an edit or a commit.
  "check-edit": {
    summary: "May this session edit these files now (file reservations)? arbeit check-edit <path>... | --staged",
    load: () => import("./check-edit-command.js"),
  },
  doctor: {
    heavy: true,
    summary: "Check the database and its event history; --fix repairs what is safe to repair",
    load: () => import("./doctor-command.js"),
  },
  export: {
    heavy: true,
    summary: "Write every table as JSON Lines: arbeit export [<file> | -]",
    load: () => import("./export-command.js"),
  },
  // Not heavy: PostToolUse runs after every file tool, so the hook starts from the lean bundle.
  hook: {
    summary:
      "Claude Code hooks (JSON on stdin): arbeit hook session-start | post-tool-use | session-end ... (--help lists them)",
    load: () => import("./hook-command.js"),
  },
  import: {
    heavy: true,
    summary: "Load an export into an empty database: arbeit import <file | -> [--keep-claims] [--replace]",
    load: () => import("./import-command.js"),
  },
  login: {
    summary: "Store a token for an Arbeit service in your own config: arbeit login <url> [--token-stdin]",
    load: () => import("./login-command.js"),
  },
  logout: {
    summary: "Forget the token stored for an Arbeit service: arbeit logout <url>",
    load: () => import("./logout-command.js"),
  },
  mcp: {
    heavy: true,
    summary: "Serve every tool over MCP on stdio (setup: docs/mcp.md)",
    load: () => import("./mcp-command.js"),
  },
  migrate: {
    heavy: true,
    summary: "Upgrade the store to this release's schema (a shared Postgres store: only this, or arbeit serve)",
    load: () => import("./migrate-command.js"),
  },
  notify: {
    heavy: true,
    summary: "Webhooks told of questions and other events: arbeit notify add <url> [--events ...], list, remove",
    load: () => import("./notify-command.js"),
  },
  serve: {
    heavy: true,
    summary: "One service for a team: MCP over HTTP and a tool-call endpoint, with tokens (docs/team.md)",
    load: () => import("./serve-command.js"),
  },
  setup: {
    heavy: true,
    summary: "Configure a host: arbeit setup claude (hooks + MCP) | opencode (plugin)",
    load: () => import("./setup-command.js"),
  },
  // Not heavy: a person's first look at a project; its modules (the store, host set-up checks)
  // are small, and handing the call on would load the full bundle after the lean one.
  status: {
    summary: "The store, its tasks, who works on what, set-up hosts; exit 1 when something needs attention",
    load: () => import("./status-command.js"),
  },
  token: {
    heavy: true,
    summary: "Tokens for arbeit serve: arbeit token create --agent NAME | --person NAME, list, revoke",
    load: () => import("./token-command.js"),
  },
  tools: { summary: "List the tools (--json: with their input schemas)", load: () => import("./tools-command.js") },
  track: {
    summary: "Record a file read/write for the session's active task: arbeit track <path> [--op read|write]",
    load: () => import("./track-command.js"),
  },
  ui: {
    heavy: true,
    summary: "A live dashboard in the browser: arbeit ui [--port N] [--open] [--read-only] (docs/dashboard.md)",
    load: () => import("./ui-command.js"),
  },
};
