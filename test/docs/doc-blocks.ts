/**
 * Finds the blocks of a Markdown page that the executable-docs test runs or checks, following the
 * convention described at the top of executable-docs.test.ts and in docs/contributing.md.
 */

export const COMMAND_LANGUAGES = new Set(["sh", "bash", "shell", "console"]);

/** One `$ ` command of a transcript and the output the page shows under it. */
export interface TranscriptStep {
  /** The command as the page shows it, continuation lines joined with "\n". */
  command: string;
  /** 1-based line of the `$ `. */
  line: number;
  /** The output as shown, lines joined with "\n", without the blank lines that separate steps. */
  output: string;
  /** 0-based line indexes in the page of the first output line and one past the last. */
  outputStart: number;
  outputEnd: number;
}

export type Marker =
  | { kind: "not-run"; reason: string }
  /** A TypeScript block that starts a module of its own (typescript-examples.test.ts). */
  | { kind: "ts-module" }
  /** A TypeScript block that starts a module which is typechecked but cannot run here. */
  | { kind: "ts-typecheck-only"; reason: string }
  | { kind: "exit"; code: number }
  | { kind: "fresh-project" }
  | { kind: "file"; path: string };

export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  /** 0-based line indexes of the first content line and of the closing fence. */
  contentStart: number;
  contentEnd: number;
  content: string;
  markers: Marker[];
  /**
   * transcript: `$ ` lines with their output, compared; script: run as one shell script, which
   * must succeed; file: the contents of a file in the project; other: not a command (a diagram,
   * a synopsis, code in another language).
   */
  kind: "transcript" | "script" | "file" | "other";
  steps: TranscriptStep[];
}

export interface DocPage {
  lines: string[];
  blocks: DocBlock[];
  /** `<!-- doc-test: continues README.md -->`: this page goes on in that page's project. */
  continues: string | undefined;
}

const MARKER = /^<!--\s*doc-test:\s*(.*?)\s*-->$/;

function parseMarker(text: string, where: string): Marker | { kind: "continues"; file: string } {
  const notRun = /^not run:\s*(\S.*)$/.exec(text);
  if (notRun) return { kind: "not-run", reason: notRun[1]! };
  const exit = /^exit (\d+)$/.exec(text);
  if (exit) return { kind: "exit", code: Number(exit[1]) };
  if (text === "fresh project") return { kind: "fresh-project" };
  if (text === "new module") return { kind: "ts-module" };
  const typecheckOnly = /^typecheck only:\s*(\S.*)$/.exec(text);
  if (typecheckOnly) return { kind: "ts-typecheck-only", reason: typecheckOnly[1]! };
  const file = /^file (\S+)$/.exec(text);
  if (file) return { kind: "file", path: file[1]! };
  const continues = /^continues (\S+)$/.exec(text);
  if (continues) return { kind: "continues", file: continues[1]! };
  throw new Error(
    `${where}: unknown doc-test marker "${text}" (known: "not run: <reason>", "exit <code>", "fresh project", "file <path>", "continues <page>", and for TypeScript "new module", "typecheck only: <reason>").`,
  );
}

export function parseDoc(text: string, name: string): DocPage {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  let continues: string | undefined;
  // Markers apply to the next fenced block; only blank lines may stand between them.
  let pending: Marker[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = MARKER.exec(line.trim());
    if (marker) {
      const parsed = parseMarker(marker[1]!, `${name}:${i + 1}`);
      if (parsed.kind === "continues") {
        if (blocks.length > 0)
          throw new Error(`${name}:${i + 1}: "continues" must come before the page's first block.`);
        continues = parsed.file;
      } else pending.push(parsed);
      continue;
    }
    const fence = /^```(\S*)\s*$/.exec(line);
    if (!fence) {
      if (line.trim() !== "" && pending.length > 0) {
        throw new Error(`${name}:${i + 1}: a doc-test marker must be followed directly by a fenced block.`);
      }
      continue;
    }
    const close = lines.findIndex((candidate, j) => j > i && /^```\s*$/.test(candidate));
    if (close < 0) throw new Error(`${name}:${i + 1}: the fenced block is never closed.`);
    const language = fence[1]!;
    const body = lines.slice(i + 1, close);
    const markers = pending;
    pending = [];
    const isTranscript = body.some((l) => l.startsWith("$ "));
    let kind: DocBlock["kind"];
    if (markers.some((m) => m.kind === "file")) kind = "file";
    else if (COMMAND_LANGUAGES.has(language) || (language === "" && body[0]?.startsWith("$ ")))
      kind = isTranscript ? "transcript" : "script";
    else kind = "other";
    if (kind === "transcript" && !body[0]?.startsWith("$ ")) {
      throw new Error(`${name}:${i + 2}: a transcript block must start with a \`$ \` line.`);
    }
    blocks.push({
      line: i + 1,
      language,
      contentStart: i + 1,
      contentEnd: close,
      content: body.join("\n"),
      markers,
      kind,
      steps: kind === "transcript" ? transcriptSteps(lines, i + 1, close) : [],
    });
    i = close;
  }
  if (pending.length > 0) throw new Error(`${name}: a doc-test marker at the end of the page has no block.`);
  return { lines, blocks, continues };
}

function transcriptSteps(lines: string[], start: number, end: number): TranscriptStep[] {
  const steps: TranscriptStep[] = [];
  let i = start;
  while (i < end) {
    const first = i;
    const command = [lines[i]!.slice(2)];
    // A trailing backslash continues the command on the next line, as in a shell.
    while (lines[i]!.endsWith("\\") && i + 1 < end) command.push(lines[++i]!);
    i++;
    const outputStart = i;
    while (i < end && !lines[i]!.startsWith("$ ")) i++;
    let outputEnd = i;
    while (outputEnd > outputStart && lines[outputEnd - 1]!.trim() === "") outputEnd--;
    steps.push({
      command: command.join("\n"),
      line: first + 1,
      output: lines.slice(outputStart, outputEnd).join("\n"),
      outputStart,
      outputEnd,
    });
  }
  return steps;
}
