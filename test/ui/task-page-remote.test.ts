import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  commitUrl,
  fileUrl,
  readProjectRemote,
  type WebRepository,
  webRepository,
} from "../../src/ui/server/git-remote.js";
import { linksOf } from "../../src/ui/server/task-page.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The task page's links for files and commits come from the project's git remote `origin`:
 * every common spelling of a GitHub, GitLab or Bitbucket remote gives the repository's web
 * address, credentials in the remote's URL never reach a link, and any other remote gives none.
 */

describe("a git remote's web address", () => {
  const github = { kind: "github", base: "https://github.com/o/r" } satisfies WebRepository;

  for (const remote of [
    "git@github.com:o/r.git",
    "git@github.com:o/r",
    "github.com:o/r.git",
    "https://github.com/o/r.git",
    "https://github.com/o/r",
    "https://github.com/o/r/",
    "ssh://git@github.com/o/r.git",
    "ssh://git@github.com:22/o/r.git",
    "git+ssh://git@github.com/o/r.git",
    "git://github.com/o/r.git",
    "  https://github.com/o/r.git\n",
  ])
    it(`reads ${JSON.stringify(remote)} as github.com/o/r`, () => {
      assert.deepEqual(webRepository(remote), github);
    });

  it("drops a user name, password or token, and any query or fragment", () => {
    for (const remote of [
      "https://alice:ghp_S3CRET@github.com/o/r.git",
      "https://ghp_S3CRET@github.com/o/r.git",
      "https://oauth2:glpat-S3CRET@github.com/o/r.git?private_token=S3CRET#S3CRET",
      "ssh://alice:S3CRET@github.com/o/r.git",
      "alice:S3CRET@github.com:o/r.git",
    ]) {
      const repo = webRepository(remote);
      assert.deepEqual(repo, github, remote);
      assert.ok(!JSON.stringify(repo).includes("S3CRET"), remote);
    }
  });

  it("knows GitLab (nested groups), Bitbucket Cloud, and self-hosted GitHub and GitLab servers", () => {
    assert.deepEqual(webRepository("git@gitlab.com:group/sub/r.git"), {
      kind: "gitlab",
      base: "https://gitlab.com/group/sub/r",
    });
    assert.deepEqual(webRepository("https://bitbucket.org/team/r.git"), {
      kind: "bitbucket",
      base: "https://bitbucket.org/team/r",
    });
    assert.deepEqual(webRepository("git@gitlab.example.com:g/r.git"), {
      kind: "gitlab",
      base: "https://gitlab.example.com/g/r",
    });
    assert.deepEqual(webRepository("https://github.corp.example:8443/o/r.git"), {
      kind: "github",
      base: "https://github.corp.example:8443/o/r",
    });
    assert.deepEqual(webRepository("http://gitlab.lan/g/r.git"), { kind: "gitlab", base: "http://gitlab.lan/g/r" });
  });

  it("gives nothing for a local path, an unknown host, or a path it cannot read", () => {
    for (const remote of [
      "",
      "/srv/git/r.git",
      "../r.git",
      "file:///srv/git/r.git",
      "C:\\repos\\r.git",
      "git@git.example.com:o/r.git",
      "https://example.com/o/r.git",
      "https://github.com/o",
      "https://github.com/o/r/extra",
      "https://github.com/o/%2e%2e",
      "https://github.com/o/r%20x",
      "https://bitbucket.example.com/scm/p/r.git",
      "ftp://github.com/o/r.git",
      "https://github.com:notaport/o/r",
    ])
      assert.equal(webRepository(remote), null, remote);
  });

  it("builds each forge's file and commit pages, escaping the path and keeping a branch's slashes", () => {
    const gitlab = { kind: "gitlab", base: "https://gitlab.com/g/r" } satisfies WebRepository;
    const bitbucket = { kind: "bitbucket", base: "https://bitbucket.org/t/r" } satisfies WebRepository;
    assert.equal(fileUrl(github, "main", "src/a b#.ts"), "https://github.com/o/r/blob/main/src/a%20b%23.ts");
    assert.equal(fileUrl(github, "release/2.0", "README.md"), "https://github.com/o/r/blob/release/2.0/README.md");
    assert.equal(fileUrl(gitlab, "abc123", "src/a.ts"), "https://gitlab.com/g/r/-/blob/abc123/src/a.ts");
    assert.equal(fileUrl(bitbucket, "HEAD", "src/a.ts"), "https://bitbucket.org/t/r/src/HEAD/src/a.ts");
    assert.equal(commitUrl(github, "abc123"), "https://github.com/o/r/commit/abc123");
    assert.equal(commitUrl(gitlab, "abc123"), "https://gitlab.com/g/r/-/commit/abc123");
    assert.equal(commitUrl(bitbucket, "abc123"), "https://bitbucket.org/t/r/commits/abc123");
  });
});

describe("the task's links", () => {
  const remote = {
    repo: { kind: "github", base: "https://github.com/o/r" } as const,
    defaultRef: "main",
    prefix: "app/",
  };

  it("link a file at the newest of the task's commits that changed it, else at the default branch", () => {
    const links = linksOf(
      remote,
      [{ file_path: "src/a.ts" }, { file_path: "src/b.ts" }],
      [
        { sha: "1111111", files: ["app/src/a.ts"] },
        { sha: "2222222", files: ["app/src/a.ts", "other/x.ts"] },
      ],
    );
    assert.deepEqual(links, {
      repository: "https://github.com/o/r",
      files: {
        "src/a.ts": "https://github.com/o/r/blob/2222222/app/src/a.ts",
        "src/b.ts": "https://github.com/o/r/blob/main/app/src/b.ts",
      },
      commits: {
        "1111111": "https://github.com/o/r/commit/1111111",
        "2222222": "https://github.com/o/r/commit/2222222",
      },
    });
  });

  it("link a file named __proto__ or constructor like any other, in the JSON the page is sent as", () => {
    const links = linksOf(remote, [{ file_path: "__proto__" }, { file_path: "constructor" }], []);
    assert.deepEqual(
      JSON.parse(JSON.stringify(links)).files,
      JSON.parse(
        `{"__proto__": "https://github.com/o/r/blob/main/app/__proto__", "constructor": "https://github.com/o/r/blob/main/app/constructor"}`,
      ),
    );
  });
});

describe("a project's remote, as its git tells", () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

  it("reads origin (without its credentials), the default branch and the project's folder in the repository", async () => {
    const { dir, cleanup } = tempDir("arbeit-remote-");
    try {
      git(dir, "init", "-q");
      git(dir, "remote", "add", "origin", "https://alice:S3CRET@gitlab.com/g/sub/r.git");
      git(dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk");
      const project = join(dir, "services", "api");
      mkdirSync(project, { recursive: true });
      const remote = await readProjectRemote(project);
      assert.deepEqual(remote, {
        repo: { kind: "gitlab", base: "https://gitlab.com/g/sub/r" },
        defaultRef: "trunk",
        prefix: "services/api/",
      });
      assert.ok(!JSON.stringify(remote).includes("S3CRET"));
    } finally {
      cleanup();
    }
  });

  it("uses HEAD, which the forges resolve to the default branch, when origin/HEAD is unknown", async () => {
    const { dir, cleanup } = tempDir("arbeit-remote-");
    try {
      git(dir, "init", "-q");
      git(dir, "remote", "add", "origin", "git@github.com:o/r.git");
      assert.deepEqual(await readProjectRemote(dir), {
        repo: { kind: "github", base: "https://github.com/o/r" },
        defaultRef: "HEAD",
        prefix: "",
      });
    } finally {
      cleanup();
    }
  });

  it("gives nothing outside a repository, without origin, or for a local origin", async () => {
    const { dir, cleanup } = tempDir("arbeit-remote-");
    try {
      assert.equal(await readProjectRemote(dir), null);
      git(dir, "init", "-q");
      assert.equal(await readProjectRemote(dir), null);
      git(dir, "remote", "add", "origin", "/srv/git/r.git");
      assert.equal(await readProjectRemote(dir), null);
    } finally {
      cleanup();
    }
  });
});
