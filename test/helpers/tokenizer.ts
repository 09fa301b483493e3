import { createRequire } from "node:module";
import { join } from "node:path";
import { installOnDemand } from "./on-demand.js";

/**
 * A real tokenizer for the token budgets the tests, scripts/tool-tokens.ts and the benchmarks
 * measure: gpt-tokenizer, at the exact version pinned here. It is no dependency of the checkout
 * (its vocabularies weigh about 30 MB): it is installed on demand into the test cache
 * (on-demand.ts), once, like the host binaries, and `.ci/run` installs it up front
 * (scripts/host-binaries.ts).
 */
export const TOKENIZER = { package: "gpt-tokenizer", version: "4.0.0" } as const;

/** The encodings measured: o200k_base (GPT-4o's, the package's default) and cl100k_base. */
export type Encoding = "o200k_base" | "cl100k_base";

export interface Tokenizer {
  encode(text: string): number[];
  countTokens(text: string): number;
}

const loaded = new Map<Encoding, Tokenizer>();

/** Where the tokenizer is installed (installing it first), or why it cannot be. */
export function tokenizerInstall(): { dir: string; missing?: string } {
  return installOnDemand(TOKENIZER.package, TOKENIZER.version, `${TOKENIZER.package}-${TOKENIZER.version}`);
}

/** The tokenizer of `encoding`, installed into the test cache first if it is not there yet. */
export function tokenizer(encoding: Encoding = "o200k_base"): Tokenizer {
  const known = loaded.get(encoding);
  if (known) return known;
  const install = tokenizerInstall();
  if (install.missing) throw new Error(`a real tokenizer is needed here, but ${install.missing}`);
  // The package's CommonJS build, required from the cache folder: synchronous, under Node and Bun.
  const require = createRequire(join(install.dir, "package.json"));
  const module = require(`./cjs/encoding/${encoding}.js`) as Tokenizer;
  const found = { encode: module.encode, countTokens: module.countTokens };
  loaded.set(encoding, found);
  return found;
}

/** Tokens of `text` in `encoding` (o200k_base unless named). */
export const countTokens = (text: string, encoding: Encoding = "o200k_base"): number =>
  tokenizer(encoding).countTokens(text);
