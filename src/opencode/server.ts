/**
 * Arbeit's OpenCode plugin: durable task memory inside OpenCode.
 *
 * As an npm plugin, in opencode.json:   { "plugin": ["arbeit"] }
 * As a local plugin (`arbeit setup opencode` writes it), .opencode/plugin/arbeit.js:
 *   export { default } from "arbeit/opencode";
 *
 * OpenCode accepts a module whose default export is `{ id, server }` (a local file plugin must
 * carry `id`), or a legacy module in which every export is a plugin function; so this module
 * exports nothing else. It runs in OpenCode's embedded Bun, where the store uses bun:sqlite.
 */
import type { Plugin, PluginModule } from "@opencode-ai/plugin";
import { createArbeitHooks } from "./plugin.js";

const server: Plugin = (input, options) => createArbeitHooks(input, options);

const plugin: PluginModule & { id: string } = { id: "arbeit", server };

export default plugin;
