import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { touchesFromToolCall, touchFromFileEdited } from "../../src/opencode/file-touches.js";
import { SessionActivity, SessionTree } from "../../src/opencode/sessions.js";

const DIR = "/work/project";

describe("OpenCode tool calls to file touches", () => {
  const cases: Array<[string, string, unknown, unknown, Array<[string, string]>]> = [
    ["read, absolute", "read", { filePath: "/work/project/a.ts", offset: 3 }, {}, [["/work/project/a.ts", "read"]]],
    ["read, relative to the directory", "read", { filePath: "src/a.ts" }, {}, [["/work/project/src/a.ts", "read"]]],
    ["write", "write", { filePath: "/work/project/b.ts", content: "x" }, {}, [["/work/project/b.ts", "write"]]],
    [
      "edit",
      "edit",
      { filePath: "/work/project/c.ts", oldString: "a", newString: "b" },
      {},
      [["/work/project/c.ts", "write"]],
    ],
    [
      "outside paths pass through (trackFile drops them)",
      "read",
      { filePath: "/etc/hosts" },
      {},
      [["/etc/hosts", "read"]],
    ],
    [
      "relative with .., left for trackFile to resolve after symlinks",
      "read",
      { filePath: "link/../a.ts" },
      {},
      [["/work/project/link/../a.ts", "read"]],
    ],
    [
      "a Windows drive path is not joined to the directory",
      "read",
      { filePath: "C:\\a.ts" },
      {},
      [["C:\\a.ts", "read"]],
    ],
    ["a tool that touches no file", "bash", { command: "ls" }, {}, []],
    ["Arbeit's own tools", "arbeit_task_get", { task_id: "tkt-aaaaaaaa" }, {}, []],
    ["read without filePath", "read", {}, {}, []],
    ["read with a non-string filePath", "read", { filePath: 42 }, {}, []],
    ["no args at all", "write", undefined, undefined, []],
  ];
  for (const [label, tool, args, metadata, expected] of cases) {
    it(label, () => {
      const touches = touchesFromToolCall(tool, args, metadata, DIR).map((t) => [t.path, t.operation]);
      assert.deepEqual(touches, expected);
    });
  }

  it("apply_patch: every file in metadata.files, a move touching both paths, a delete a write", () => {
    const metadata = {
      files: [
        { filePath: "/work/project/new.ts", relativePath: "new.ts", type: "add" },
        { filePath: "/work/project/old.ts", relativePath: "old.ts", type: "update" },
        { filePath: "/work/project/from.ts", relativePath: "from.ts", type: "move", movePath: "/work/project/to.ts" },
        { filePath: "/work/project/gone.ts", relativePath: "gone.ts", type: "delete" },
        "not a file row",
        { relativePath: "no-absolute-path.ts" },
      ],
    };
    const touches = touchesFromToolCall("apply_patch", { patchText: "*** Begin Patch" }, metadata, DIR);
    assert.deepEqual(
      touches.map((t) => [t.path, t.operation]),
      [
        ["/work/project/new.ts", "write"],
        ["/work/project/old.ts", "write"],
        ["/work/project/from.ts", "write"],
        ["/work/project/to.ts", "write"],
        ["/work/project/gone.ts", "write"],
      ],
    );
  });

  it("apply_patch without metadata touches nothing", () => {
    assert.deepEqual(touchesFromToolCall("apply_patch", { patchText: "" }, undefined, DIR), []);
    assert.deepEqual(touchesFromToolCall("apply_patch", {}, { files: "nope" }, DIR), []);
  });

  it("file.edited names a written file", () => {
    assert.deepEqual(touchFromFileEdited({ file: "/work/project/x.ts" }, DIR), {
      path: "/work/project/x.ts",
      operation: "write",
    });
    assert.deepEqual(touchFromFileEdited({ file: "x.ts" }, DIR), { path: "/work/project/x.ts", operation: "write" });
    assert.equal(touchFromFileEdited({}, DIR), undefined);
    assert.equal(touchFromFileEdited(null, DIR), undefined);
  });
});

describe("subagent sessions", () => {
  it("know the sessions they were started from, nearest first", () => {
    const tree = new SessionTree();
    tree.created("child", "parent");
    tree.created("grandchild", "child");
    tree.created("parent", undefined);
    assert.deepEqual(tree.ancestors("grandchild"), ["child", "parent"]);
    assert.deepEqual(tree.ancestors("child"), ["parent"]);
    assert.deepEqual(tree.ancestors("parent"), []);
    assert.deepEqual(tree.ancestors("stranger"), []);
    tree.deleted("child");
    assert.deepEqual(tree.ancestors("grandchild"), ["child"]);
  });

  it("never loop on a cycle", () => {
    const tree = new SessionTree();
    tree.created("a", "b");
    tree.created("b", "a");
    tree.created("c", "c");
    assert.deepEqual(tree.ancestors("a"), ["b"]);
    assert.deepEqual(tree.ancestors("c"), []);
  });

  it("remember the agent each session runs as", () => {
    const tree = new SessionTree();
    assert.equal(tree.agentOf("s"), null);
    tree.agentIs("s", "build");
    tree.agentIs("s", undefined);
    assert.equal(tree.agentOf("s"), "build");
  });
});

describe("which session a file.edited event belongs to", () => {
  it("is the only session running a tool, else the last one that ran one", () => {
    const activity = new SessionActivity();
    assert.equal(activity.likelySession(), undefined);
    activity.started("c1", "s1");
    assert.equal(activity.likelySession(), "s1");
    activity.finished("c1");
    assert.equal(activity.likelySession(), "s1");
    activity.started("c2", "s2");
    assert.equal(activity.likelySession(), "s2");
  });

  it("is nobody when two sessions run tools at once", () => {
    const activity = new SessionActivity();
    activity.started("c1", "s1");
    activity.started("c2", "s2");
    assert.equal(activity.likelySession(), undefined);
    activity.finished("c2");
    assert.equal(activity.likelySession(), "s1");
  });

  it("is the sub-agent, not the session waiting on its task call", () => {
    const activity = new SessionActivity();
    activity.started("c1", "parent", "task");
    activity.started("c2", "child", "edit");
    assert.equal(activity.likelySession(), "child");
  });

  it("forgets the calls of a session gone idle (a tool that threw never reports back)", () => {
    const activity = new SessionActivity();
    activity.started("c1", "s1");
    activity.started("c2", "s2");
    activity.idle("s1");
    assert.equal(activity.likelySession(), "s2");
  });
});
