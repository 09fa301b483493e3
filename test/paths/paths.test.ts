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
 *   <base>/proj/sub/deep
 *   <base>/proj/deep-link    -> <base>/proj/sub/deep   (deep-link/.. is sub, not the root)
 *   <base>/proj/up-out       -> <base>/outside/inner   (up-out/.. is outside)
 *   <base>/proj/loop-a       -> loop-b -> loop-a
 *   <base>/proj/dangling-in  -> <base>/proj/src/not-yet.ts
 *   <base>/proj/dangling-out -> <base>/outside/nothing-here
 *   <base>/proj/dangling-rel -> ../outside/missing
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
  mkdirSync(join(root, "sub", "deep"), { recursive: true });
  mkdirSync(join(outside, "inner"));
  symlinkSync(join(root, "sub", "deep"), join(root, "deep-link"));
  symlinkSync(join(outside, "inner"), join(root, "up-out"));
  symlinkSync("loop-b", join(root, "loop-a"));
  symlinkSync("loop-a", join(root, "loop-b"));
  symlinkSync(join(root, "src", "not-yet.ts"), join(root, "dangling-in"));
  symlinkSync(join(outside, "nothing-here"), join(root, "dangling-out"));
  symlinkSync("../outside/missing", join(root, "dangling-rel"));
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
    ["link/.. as the kernel does: .. of the symlink's target", () => "deep-link/../a.ts", "sub/a.ts"],
    ["an absolute link/.. spelled out", () => `${root}/deep-link/../b.ts`, "sub/b.ts"],
    ["a missing folder and .. back into a real one", () => "nope/../src/a.ts", "src/a.ts"],
    ["a symlink to a file inside that does not exist yet, as its target", () => "dangling-in", "src/not-yet.ts"],
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
    ["a missing folder, .. and a symlinked folder out", () => "nope/../link-out/x"],
    ["a missing folder, .. and a file through a symlink out", () => "nope/../link-out/secret.txt"],
    ["link/.. where the target's parent is outside", () => "up-out/../secret.txt"],
    ["a symlink to a missing file outside", () => "dangling-out"],
    ["a new file under a symlink to a missing folder outside", () => "dangling-out/x.txt"],
    ["a relative symlink to a missing file outside", () => "dangling-rel"],
    ["a symlink loop", () => "loop-a"],
    ["a path through a symlink loop", () => "loop-a/x.ts"],
    ["a drive path with forward slashes", () => "C:/x"],
    ["a drive path with backslashes", () => "C:\\x"],
    ["a drive-relative path", () => "c:x"],
    ["a UNC path", () => "\\\\server\\share\\x"],
    ["a UNC path with forward slashes", () => "//server/share/x"],
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
      ["deep-link/../cli.ts", "sub/cli.ts"],
      ["link-out/../outside/cli.txt", null],
      ["nope/../link-out/cli.txt", null],
      ["loop-a/cli.ts", null],
      ["dangling-out", null],
      ["C:\\x", null],
      ["C:/x", null],
      ["c:x", null],
      ["\\\\server\\share\\x", null],
      ["//server/share/x", null],
    ];
    for (const [path, expected, cwd] of cases) {
      const result = await runCli(["track", path, "--json"], { cwd: cwd ?? root, env });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.json.data.tracked, expected !== null, `${path}: ${result.stdout}`);
      if (expected !== null) assert.equal(result.json.data.file_path, expected);
    }
  });
});

describe("paths through a Claude Code hook (arbeit hook post-tool-use)", () => {
  it("a relative path keeps its .. until symlinks are resolved", async () => {
    const session = "ses-hook-paths";
    const env = { ARBEIT_SESSION: session };
    const created = await runCli(["call", "arbeit_task_create", '{"title": "hook paths"}'], { cwd: root, env });
    await runCli(["task", "start", created.json.data.task.id, "--json"], { cwd: root, env });
    for (const file_path of ["deep-link/../hook.ts", "nope/../link-out/hook.txt", "c:hook.ts"]) {
      const input = JSON.stringify({
        session_id: session,
        cwd: root,
        hook_event_name: "PostToolUse",
        tool_name: "Write",
        tool_input: { file_path },
      });
      const result = await runCli(["hook", "post-tool-use"], { cwd: root, input, env: { CLAUDE_PROJECT_DIR: "" } });
      assert.equal(result.code, 0, result.stderr);
    }
    const hooked = recorded().filter((path) => path.includes("hook."));
    assert.deepEqual(hooked, ["sub/hook.ts"]);
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
