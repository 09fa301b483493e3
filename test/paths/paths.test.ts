import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { isAbsolutePath, projectRelative } from "../../src/domain/paths.js";
import type { ArbeitService } from "../../src/service/arbeit-service.js";
import type { Caller } from "../../src/service/caller.js";
import { initProject, openProject } from "../../src/service/project.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * File associations are stored relative to the project root; nothing outside it is ever
 * recorded, however the path is spelled: `..`, absolute, through a symlink, with backslashes.
 *
 *   <base>/proj                 the project (.arbeit/ inside)
 *   <base>/proj/src/a.ts
 *   <base>/proj/link-out     -> <base>/outside
 *   <base>/proj/file-link    -> <base>/outside/secret.txt
 *   <base>/outside/secret.txt
 *   <base>/outside/link-in   -> <base>/proj/src
 *   <base>/alias             -> <base>/proj
 *   <base>/proj-evil/a.ts       shares a prefix with the root, but is outside it
 */
let base: string;
let root: string;
let outside: string;
let cleanup: () => void;
let service: ArbeitService;
const caller: Caller = { session: "ses-paths", agent: "tester" };

before(async () => {
  ({ dir: base, cleanup } = tempDir("arbeit-paths-"));
  root = join(base, "proj");
  outside = join(base, "outside");
  mkdirSync(join(root, "src"), { recursive: true });
  mkdirSync(outside);
  mkdirSync(join(base, "proj-evil"));
  writeFileSync(join(root, "src", "a.ts"), "a");
  writeFileSync(join(outside, "secret.txt"), "secret");
  writeFileSync(join(base, "proj-evil", "a.ts"), "evil");
  symlinkSync(outside, join(root, "link-out"));
  symlinkSync(join(outside, "secret.txt"), join(root, "file-link"));
  symlinkSync(join(root, "src"), join(outside, "link-in"));
  symlinkSync(root, join(base, "alias"));
  await initProject({ cwd: root });
  service = await openProject({ cwd: root });
  const { task } = (await service.createTask({ title: "paths" }, caller)).data;
  await service.startWork({ task_id: task.id }, caller);
});
after(async () => {
  await service.close();
  cleanup();
});

const track = async (path: string) => (await service.trackFile({ path, operation: "write" }, caller)).data;

function recorded(): string[] {
  return (service.store as any).driver
    .prepare("SELECT file_path FROM file_associations ORDER BY rowid")
    .all()
    .map((row: { file_path: string }) => row.file_path);
}

describe("paths through the service (real files, real symlinks)", () => {
  const INSIDE: Array<[string, () => string, string]> = [
    ["a relative path", () => "src/a.ts", "src/a.ts"],
    ["./a/../b", () => "./src/../src/a.ts", "src/a.ts"],
    ["a/../b for a file that does not exist yet", () => "./docs/../notes.md", "notes.md"],
    ["an absolute path inside", () => join(root, "src", "a.ts"), "src/a.ts"],
    ["a trailing slash", () => "src/", "src"],
    ["doubled slashes", () => "src//a.ts", "src/a.ts"],
    ["Windows-style backslashes", () => "src\\a.ts", "src/a.ts"],
    ["a symlink outside -> inside", () => join(outside, "link-in", "a.ts"), "src/a.ts"],
    ["the root reached through a symlinked alias", () => join(base, "alias", "src", "a.ts"), "src/a.ts"],
    ["a new file in a real folder", () => "src/new-file.ts", "src/new-file.ts"],
  ];
  for (const [label, path, expected] of INSIDE) {
    it(`records ${label} as ${expected}`, async () => {
      const result = await track(path());
      assert.equal(result.tracked || result.reason === "already_tracked", true, JSON.stringify(result));
      assert.equal(result.file_path, expected);
    });
  }

  const OUTSIDE: Array<[string, () => string]> = [
    ["a .. escape", () => "../outside/secret.txt"],
    ["a .. escape after a folder", () => "src/../../outside/secret.txt"],
    ["a .. escape past the filesystem root", () => "../../../../../../../../../../etc/passwd"],
    ["an absolute path outside", () => join(outside, "secret.txt")],
    ["/etc/passwd", () => "/etc/passwd"],
    ["a sibling sharing the root's name as a prefix", () => join(base, "proj-evil", "a.ts")],
    ["a symlinked folder inside -> outside", () => "link-out/secret.txt"],
    ["a new file under a symlinked folder inside -> outside", () => "link-out/not-yet.txt"],
    ["a symlinked file inside -> outside", () => "file-link"],
    ["a .. after a symlink (resolved as the kernel does, not lexically)", () => "link-out/../outside/secret.txt"],
    ["Windows-style .. escape", () => "..\\outside\\secret.txt"],
    ["a Windows drive path", () => "C:\\Windows\\system32\\drivers\\etc\\hosts"],
    ["a NUL byte", () => "src/a\u0000.ts"],
    ["the root itself", () => root],
    ["the root as .", () => "."],
    ["the root with a trailing slash", () => `${root}/`],
    ["an empty path", () => ""],
  ];
  for (const [label, path] of OUTSIDE) {
    it(`never records ${label}`, async () => {
      const before = recorded();
      const result = await track(path());
      assert.equal(result.tracked, false, JSON.stringify(result));
      assert.deepEqual(recorded(), before);
    });
  }

  it("only project-relative paths were ever stored", () => {
    for (const path of recorded()) {
      assert.ok(!path.startsWith("/") && !path.includes("..") && !path.includes("\\"), path);
      assert.ok(!path.includes("outside") && !path.includes("secret"), path);
    }
  });

  it("a path over the limit is FIELD_TOO_LARGE naming the limit", async () => {
    await assert.rejects(track(`src/${"x".repeat(5000)}`), (error: any) => {
      assert.equal(error.code, "FIELD_TOO_LARGE");
      assert.match(error.message, /path is too large \(limit 4096/);
      return true;
    });
  });
});

describe("paths through the real CLI (arbeit track)", () => {
  it("records inside paths and ignores escapes and symlinks out", async () => {
    const env = { ARBEIT_SESSION: "ses-cli-paths" };
    const created = await runCli(["call", "arbeit_task_create", '{"title": "cli paths"}'], { cwd: root, env });
    const id = created.json.data.task.id;
    await runCli(["task", "start", id, "--json"], { cwd: root, env });
    const cases: Array<[string, string | null, string?]> = [
      ["src/a.ts", "src/a.ts"],
      ["../outside/secret.txt", null],
      ["link-out/secret.txt", null],
      [join(outside, "secret.txt"), null],
      ["b.ts", "src/b.ts", join(root, "src")],
    ];
    for (const [path, expected, cwd] of cases) {
      const result = await runCli(["track", path, "--json"], { cwd: cwd ?? root, env });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.json.data.tracked, expected !== null, `${path}: ${result.stdout}`);
      if (expected !== null) assert.equal(result.json.data.file_path, expected);
    }
  });
});

describe("projectRelative (pure) with Windows and POSIX spellings", () => {
  const CASES: Array<[string, string, string | null]> = [
    ["/home/me/proj", "/home/me/proj/src/a.ts", "src/a.ts"],
    ["/home/me/proj", "src/a.ts", "src/a.ts"],
    ["/home/me/proj", "/home/me/proj", null],
    ["/home/me/proj", "/home/me/proj/", null],
    ["/home/me/proj", "/home/me/project/a.ts", null],
    ["/home/me/proj", "/home/me/proj/../proj/a.ts", "a.ts"],
    ["/home/me/proj", "a/b/../../../x", null],
    ["C:\\Users\\me\\proj", "C:\\Users\\me\\proj\\src\\a.ts", "src/a.ts"],
    ["C:\\Users\\me\\proj", "C:/Users/me/proj/src/a.ts", "src/a.ts"],
    ["C:\\Users\\me\\proj", "src\\a.ts", "src/a.ts"],
    ["C:\\Users\\me\\proj", "D:\\Users\\me\\proj\\a.ts", null],
    ["C:\\Users\\me\\proj", "C:\\Users\\me\\proj", null],
    ["C:\\Users\\me\\proj", "C:\\Users\\me\\proj-evil\\a.ts", null],
    ["C:\\Users\\me\\proj", "..\\secret", null],
    ["C:\\Users\\me\\proj", "\\\\server\\share\\a.ts", null],
    ["/home/me/proj", "a\u0000b", null],
  ];
  for (const [root, path, expected] of CASES) {
    it(`${JSON.stringify(path)} under ${JSON.stringify(root)} -> ${JSON.stringify(expected)}`, () => {
      assert.equal(projectRelative(root, path), expected);
    });
  }

  it("isAbsolutePath knows POSIX, UNC and drive-letter forms", () => {
    for (const path of ["/a", "\\a", "\\\\server\\share", "C:\\a", "c:/a"])
      assert.equal(isAbsolutePath(path), true, path);
    for (const path of ["a", "./a", "../a", "C:", "a:b/c", ""]) assert.equal(isAbsolutePath(path), false, path);
  });
});
