"use strict";
// Preloaded (`node -r`) into a CLI process by test/cli/startup.test.ts: records what the call
// loaded and writes it, at exit, as JSON to the file named by ARBEIT_LOAD_RECORD.
//   bundles:   the CLI bundles the loader compiled (arbeit-core.cjs, and arbeit.cjs when handed on)
//   builtins:  the Node built-in modules loaded beyond those a bare `node` loads
//   described: the zod schemas built with a description (.describe / .meta), by description
//   packages:  the packages loaded from node_modules outside the bundles (better-sqlite3, say)
const { writeFileSync } = require("node:fs");
const { basename } = require("node:path");
const vm = require("node:vm");

const preloaded = new Set(process.moduleLoadList);
const bundles = [];
const described = [];

const { Script } = vm;
vm.Script = class extends Script {
  constructor(code, options) {
    bundles.push(basename(options?.filename ?? "?"));
    super(code, options);
  }
};

// zod keeps its registry of described schemas on globalThis; count what is added to it.
let registry;
Object.defineProperty(globalThis, "__zod_globalRegistry", {
  configurable: true,
  get: () => registry,
  set(value) {
    registry = value;
    const add = value.add;
    value.add = function (schema, ...meta) {
      const entry = meta[0];
      described.push(typeof entry?.description === "string" ? entry.description : JSON.stringify(entry));
      return add.call(this, schema, ...meta);
    };
  },
});

process.on("exit", () => {
  const builtins = process.moduleLoadList
    .filter((entry) => !preloaded.has(entry) && entry.startsWith("NativeModule "))
    .map((entry) => entry.slice("NativeModule ".length));
  const packages = [
    ...new Set(
      Object.keys(require.cache)
        .map((file) => /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file)?.[1])
        .filter((name) => name !== undefined),
    ),
  ];
  writeFileSync(process.env.ARBEIT_LOAD_RECORD, JSON.stringify({ bundles, builtins, described, packages }));
});
