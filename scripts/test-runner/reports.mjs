// What one test file's run reported, read from the runner's own output: Node's TAP (written to a
// file beside the readable spec report) and Bun's console report. Counts, skips and failures by
// name, so the closing line can sum both runners and repeat each failure with its file.

/** Node's TAP: counts from its closing comments, skips and failures from the test lines. */
export function readNodeTap(tap, { namePattern = false } = {}) {
  const count = (label) => Number(new RegExp(`^# ${label} (\\d+)$`, "m").exec(tap)?.[1] ?? 0);
  const skipped = [];
  const failures = [];
  // The names of the enclosing suites, by depth: TAP nests a subtest four spaces deeper.
  const path = [];
  let failure;
  for (const line of tap.split("\n")) {
    const subtest = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      const depth = subtest[1].length / 4;
      path.length = depth;
      path[depth] = subtest[2];
      continue;
    }
    const result = /^(\s*)(not ok|ok) \d+ - (.*?)(?: # (SKIP|TODO)\b(.*))?$/.exec(line);
    if (result) {
      const depth = result[1].length / 4;
      const name = [...path.slice(0, depth), result[3]].join(" › ");
      failure = undefined;
      if (result[4]) {
        const reason = result[5].trim();
        // A test left out by --test-name-pattern was not chosen; it did not skip itself.
        if (namePattern && reason === "test name does not match pattern") continue;
        skipped.push(`${name} (${result[4].toLowerCase()}${reason ? `: ${reason}` : ""})`);
      } else if (result[2] === "not ok") {
        failure = { name, error: "" };
        failures.push(failure);
      }
      continue;
    }
    if (!failure || failure.error) continue;
    const error = /^\s+error: (.*)$/.exec(line);
    // The message is quoted on the line, or a YAML block (`|-`) whose first line comes next.
    if (error && /^[|>][-+]?$/.test(error[1])) failure.error = undefined;
    else if (error) failure.error = error[1].replace(/^'|'$/g, "");
    else if (failure.error === undefined && line.trim()) failure.error = line.trim();
  }
  return {
    passed: count("pass"),
    // A cancelled test (its file ended or timed out before it finished) did not pass.
    failed: count("fail") + count("cancelled"),
    skipped,
    // A suite fails with its tests: name the tests, not every suite around them as well.
    failures: failures
      .filter((one) => !failures.some((other) => other.name.startsWith(`${one.name} › `)))
      .map((one) => ({ ...one, error: one.error ?? "" })),
  };
}

/** Bun's report: "(pass) a > b" lines and its closing " N pass" / " N fail" counts. */
export function readBunReport(output) {
  const count = (label) => Number(new RegExp(`^\\s*(\\d+) ${label}$`, "m").exec(output)?.[1] ?? 0);
  const strip = (name) => name.replace(/ \[[\d.]+m?s\]$/, "");
  const skipped = [];
  for (const match of output.matchAll(/^\(skip\) (.*)$/gm)) skipped.push(strip(match[1]));
  for (const match of output.matchAll(/^\(todo\) (.*)$/gm)) skipped.push(`${strip(match[1])} (todo)`);
  // Bun reports nothing of a describe block skipped as a whole; test/helpers/requirements.ts
  // announces each such skip on stderr.
  for (const match of output.matchAll(/^SKIPPING (.*)$/gm)) skipped.push(match[1]);
  const failures = [...output.matchAll(/^\(fail\) (.*)$/gm)].map((match) => ({ name: strip(match[1]), error: "" }));
  return { passed: count("pass"), failed: count("fail"), skipped, failures };
}
