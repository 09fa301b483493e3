#!/usr/bin/env node
"use strict";
// The `arbeit` command. The CLI itself is built into dist/ (`npm install` in a checkout builds
// it). This file is committed so that the command exists in a copy that was never built, and
// says what to do there instead of being missing.
const { existsSync } = require("node:fs");
const { join } = require("node:path");

const main = join(__dirname, "..", "dist", "cli", "main.js");
if (existsSync(main)) {
  require(main);
} else {
  const root = join(__dirname, "..");
  process.stderr.write(
    `arbeit: this copy of Arbeit (${root}) has not been built: dist/ is missing.\n` +
      `Run \`npm install\` in ${root} (it installs the dependencies and builds dist/), then try again.\n`,
  );
  process.exitCode = 1;
}
