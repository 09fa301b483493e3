import { execFile } from "node:child_process";

/**
 * Web links for a project's files and commits, from its git remote `origin`. A remote's URL is
 * turned into the repository's web address only for hosts whose page layout is known (GitHub,
 * GitLab, Bitbucket Cloud and hosts named after the first two); any other remote, or none, gives
 * no links, and the page shows plain text. A user name, password or token in the remote's URL
 * (`https://user:token@host/...`) is never part of a link, nor is a query or fragment.
 */

export type ForgeKind = "github" | "gitlab" | "bitbucket";

/** A repository's web address, and how its host lays out file and commit pages. */
export interface WebRepository {
  kind: ForgeKind;
  /** `https://github.com/owner/repo`: scheme, host and repository path, nothing else. */
  base: string;
}

/** The form `git@host:owner/repo.git` (scp-like: no scheme, a colon before the path). */
const SCP_LIKE = /^(?:[^@/\s]+@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/;
/** A repository path segment as forges allow it. */
const SEGMENT = /^[A-Za-z0-9._~-]+$/;

function kindOf(host: string): ForgeKind | null {
  if (host === "bitbucket.org") return "bitbucket";
  // Self-hosted GitHub Enterprise and GitLab servers usually carry the product's name.
  if (host === "github.com" || /(?:^|[.-])github(?:[.-]|$)/.test(host)) return "github";
  if (host === "gitlab.com" || /(?:^|[.-])gitlab(?:[.-]|$)/.test(host)) return "gitlab";
  return null;
}

/**
 * The web repository a remote URL names, or null when it names none this module knows how to
 * link to (a local path, an unknown host, a malformed URL). Accepts https/http, ssh://, git://
 * and scp-like (`git@github.com:o/r.git`) forms.
 */
export function webRepository(remote: string): WebRepository | null {
  const given = remote.trim();
  let host: string;
  let path: string;
  let scheme = "https";
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(given)) {
    let url: URL;
    try {
      url = new URL(given);
    } catch {
      return null;
    }
    const protocol = url.protocol.slice(0, -1).toLowerCase();
    if (!["https", "http", "ssh", "git", "git+ssh", "ssh+git"].includes(protocol)) return null;
    // A plain-http remote is served over plain http; every other one is browsed over https.
    if (protocol === "http") scheme = "http";
    host = url.hostname;
    path = url.pathname;
    // The port of an ssh or git remote is not the web server's; an http(s) remote's is.
    if (url.port && (protocol === "https" || protocol === "http")) host = `${host}:${url.port}`;
  } else {
    const scp = SCP_LIKE.exec(given);
    if (!scp || given.startsWith("/") || /^[A-Za-z]:[\\/]/.test(given)) return null;
    host = scp[1]!;
    path = scp[2]!;
  }
  host = host.toLowerCase();
  const kind = kindOf(host.replace(/:\d+$/, ""));
  if (!kind) return null;
  const segments = path
    .replace(/^\/+|\/+$/g, "")
    .replace(/\.git$/, "")
    .split("/");
  // GitLab nests groups (group/subgroup/repo); GitHub and Bitbucket have owner/repo exactly.
  if (segments.length < 2 || (kind !== "gitlab" && segments.length !== 2)) return null;
  if (!segments.every((segment) => SEGMENT.test(segment) && segment !== "." && segment !== "..")) return null;
  return { kind, base: `${scheme}://${host}/${segments.join("/")}` };
}

/** A path's segments, each escaped for a URL (a branch such as `release/2.0` keeps its slash). */
const escapedPath = (path: string) => path.split("/").map(encodeURIComponent).join("/");

/** The page of `path` (relative to the repository's root) at `ref` (a commit or a branch). */
export function fileUrl(repo: WebRepository, ref: string, path: string): string {
  const at = `${escapedPath(ref)}/${escapedPath(path.replace(/^\/+/, ""))}`;
  switch (repo.kind) {
    case "github":
      return `${repo.base}/blob/${at}`;
    case "gitlab":
      return `${repo.base}/-/blob/${at}`;
    case "bitbucket":
      return `${repo.base}/src/${at}`;
  }
}

/** The page of commit `sha`. */
export function commitUrl(repo: WebRepository, sha: string): string {
  const id = encodeURIComponent(sha);
  switch (repo.kind) {
    case "github":
      return `${repo.base}/commit/${id}`;
    case "gitlab":
      return `${repo.base}/-/commit/${id}`;
    case "bitbucket":
      return `${repo.base}/commits/${id}`;
  }
}

/** What the project's git says about its remote: where it is browsed, its default branch, where the project sits. */
export interface ProjectRemote {
  repo: WebRepository;
  /** The remote's default branch (`origin/HEAD`), or `HEAD`, which the forges resolve to it. */
  defaultRef: string;
  /** The project's folder inside the repository, with a trailing slash; "" at its root. */
  prefix: string;
}

const GIT_TIMEOUT_MS = 3_000;

function git(cwd: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      "git",
      args,
      { cwd, timeout: GIT_TIMEOUT_MS, encoding: "utf8", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } },
      (error, stdout) => resolve(error ? undefined : stdout.trim()),
    );
  });
}

/**
 * The project's remote `origin` as web links can use it; null when the folder is not in a git
 * repository, has no `origin`, or names a host without known pages. Git is run without a shell;
 * the remote's URL itself is never returned.
 */
export async function readProjectRemote(projectRoot: string): Promise<ProjectRemote | null> {
  const [url, prefix, head] = await Promise.all([
    git(projectRoot, ["remote", "get-url", "origin"]),
    git(projectRoot, ["rev-parse", "--show-prefix"]),
    git(projectRoot, ["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"]),
  ]);
  if (!url || prefix === undefined) return null;
  const repo = webRepository(url);
  if (!repo) return null;
  const branch = head?.startsWith("origin/") ? head.slice("origin/".length) : "";
  return { repo, defaultRef: branch || "HEAD", prefix };
}

/** A cached reader of the project's remote: git is asked again at most once per `maxAgeMs`. */
export function projectRemoteReader(projectRoot: string, maxAgeMs = 30_000): () => Promise<ProjectRemote | null> {
  let cached: { at: number; value: Promise<ProjectRemote | null> } | undefined;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at > maxAgeMs) cached = { at: now, value: readProjectRemote(projectRoot) };
    return cached.value;
  };
}
