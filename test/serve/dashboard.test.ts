import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { runCli } from "../helpers/cli.js";
import { postgresSkip } from "../helpers/postgres.js";
import { requirement } from "../helpers/requirements.js";
import {
  chromiumSkip,
  type Engine,
  launchChromium,
  type UiProject,
  uiProject,
  visitAnotherServer,
} from "../ui/harness.js";
import { makeToken, opensslMissing, type Service, selfSigned, signIn, startService } from "./harness.js";

/**
 * The dashboard on `arbeit serve`, as people meet it: the real service process, a real headless
 * Chromium, and people who sign in with the tokens an administrator made for them.
 */

const KEY = "arbeit-token";
const AGENT_SESSION = "ses-agent-42";

/** The ids of the project's tokens, by name. */
async function tokenIds(project: UiProject): Promise<Record<string, string>> {
  const listed = await runCli(["token", "list", "--json"], { cwd: project.dir, env: project.env });
  return Object.fromEntries(
    listed.json.data.tokens.map((token: { name: string; id: string }) => [token.name, token.id]),
  );
}

const storedToken = (page: Page) => page.evaluate((key) => (globalThis as any).localStorage.getItem(key), KEY);

function dashboardSuite(engine: Engine) {
  let project: UiProject;
  let service: Service;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dana: string;
  let task: string;
  let claimed: string;
  let question: string;
  const foreign: string[] = [];

  before(async () => {
    project = await uiProject(engine);
    task = (await project.cli(["task", "create", "--title", "Write the lexer"])).task.id;
    const call = (tool: string, args: unknown) =>
      project.cli(["call", tool, "-", "--session", AGENT_SESSION, "--agent", "claude-code"], JSON.stringify(args));
    claimed = (await call("arbeit_task_create", { title: "Held by an agent" })).task.id;
    await call("arbeit_task_start_work", { task_id: claimed });
    question = (await call("arbeit_context_add", { task_id: claimed, type: "blocker", content: "Tabs or spaces?" }))
      .entry.id;
    dana = await makeToken(project, ["--person", "dana"]);
    service = await startService(project);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on("request", (request) => {
      const url = request.url();
      if (!url.startsWith(`${service.url}/`) && !url.startsWith("data:")) foreign.push(url);
    });
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    await project?.close();
  });

  it("shows a page without a token the sign-in form and no data", async () => {
    const answers: number[] = [];
    const listen = (response: { url(): string; status(): number }) => {
      if (new URL(response.url()).pathname.startsWith("/api/")) answers.push(response.status());
    };
    page.on("response", listen);
    await page.goto(`${service.url}/board`);
    await page.locator('[data-view="sign-in"]').getByLabel("Token").waitFor();
    page.off("response", listen);
    assert.equal(await page.locator('[data-view="board"]').count(), 0);
    assert.ok(!(await page.content()).includes("Write the lexer"));
    assert.deepEqual(answers, [], "nothing is asked of the API without a token");
  });

  it("refuses a wrong token in the form and keeps nothing", async () => {
    await signIn(page, service, "arb_not-a-token-anyone-made");
    const alert = page.locator('[data-view="sign-in"]').getByRole("alert");
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? "", /UNAUTHORIZED/);
    assert.equal(await storedToken(page), null);
  });

  it("refuses an agent's token at sign-in: people sign in to the dashboard", async () => {
    const agent = await makeToken(project, ["--agent", "ci-runner"]);
    await signIn(page, service, agent);
    const alert = page.locator('[data-view="sign-in"]').getByRole("alert");
    await alert.getByText("agent's token").waitFor();
    assert.match((await alert.textContent()) ?? "", /FORBIDDEN.*person's token/);
    assert.equal(await storedToken(page), null);
    assert.equal(await page.locator('[data-view="board"]').count(), 0);
  });

  it("signs a person in with their token: the board shows the project, and the page names them", async () => {
    await signIn(page, service, dana);
    await page.locator(`[data-view="board"] [data-task-id="${task}"]`).waitFor();
    await page.locator("header .who").getByText("human:dana").waitFor();
    assert.equal(await storedToken(page), dana);
    const shown = new URL(page.url());
    assert.equal(shown.pathname, "/board");
    assert.ok(!page.url().includes(dana), "the token is not in the address bar");
  });

  it("keeps the token out of every cookie, and sends it to no other server on this host", async () => {
    assert.deepEqual(await context.cookies(), []);
    const { headers, stored } = await visitAnotherServer(context, KEY);
    assert.ok(headers.length >= 2, "the other server was visited");
    for (const seen of headers) {
      assert.equal(seen.cookie, undefined);
      assert.ok(!JSON.stringify(seen).includes(dana), "no header carries the token");
    }
    assert.equal(stored, null, "another origin reads none");
  });

  it("edits as human:<name> from the token, and the event names the token", async () => {
    await page.goto(`${service.url}/task/${task}`);
    const title = page.locator('[data-view="task"] [data-field="title"]');
    await title.locator(".field-value").click();
    await title.getByRole("textbox", { name: "Title" }).fill("Write the lexer by hand");
    await title.getByRole("textbox", { name: "Title" }).press("Enter");
    await page.locator('[data-view="task"]').getByRole("heading", { name: "Write the lexer by hand" }).waitFor();
    const seen = await project.cli(["task", "get", task, "--include", "recent_events"]);
    assert.equal(seen.task.title, "Write the lexer by hand");
    const edit = seen.recent_events.at(-1);
    assert.equal(edit.agent, "human:dana");
    assert.equal(edit.payload.token_id, (await tokenIds(project)).dana);
  });

  it("shows a change another process makes, without a reload", async () => {
    await page.goto(`${service.url}/board`);
    await page.locator(`[data-view="board"] [data-task-id="${task}"]`).waitFor();
    let navigations = 0;
    const count = (frame: { parentFrame(): unknown }) => {
      if (frame.parentFrame() === null) navigations++;
    };
    page.on("framenavigated", count);
    await page.locator(".connection.live").waitFor();
    await project.cli(["task", "create", "--title", "Made by another agent"]);
    await page.locator('[data-view="board"]').getByText("Made by another agent").waitFor({ timeout: 10_000 });
    page.off("framenavigated", count);
    assert.equal(navigations, 0, "the page did not reload");
  });

  it("answers an agent's question in the inbox and breaks its claim, as a person may", async () => {
    await page.goto(`${service.url}/inbox`);
    const asked = page.getByRole("article", { name: `Question on ${claimed}` });
    await asked.getByRole("textbox", { name: "Answer" }).fill("Spaces.");
    await asked.getByRole("button", { name: "Send answer" }).click();
    await asked.waitFor({ state: "detached", timeout: 10_000 });
    const entries = (await project.cli(["task", "get", claimed, "--include", "context_all"])).context_all;
    const answer = entries.find((entry: { type: string }) => entry.type === "user_input");
    assert.equal(answer.content, "Spaces.");
    assert.equal(entries.find((entry: { id: string }) => entry.id === question).superseded_by, answer.id);

    await page.goto(`${service.url}/task/${claimed}`);
    await page.getByRole("button", { name: `Break claim on ${claimed}` }).click();
    await page
      .getByRole("button", { name: `Break claim on ${claimed}` })
      .waitFor({ state: "detached", timeout: 10_000 });
    const seen = await project.cli(["task", "get", claimed, "--include", "recent_events"]);
    assert.equal(seen.task.claim_session, null);
    const released = seen.recent_events.find((event: { event_type: string }) => event.event_type === "claim_released");
    assert.equal(released.agent, "human:dana");
  });

  it("shows a read-only person everything, offers no edits, and refuses an edit with a clear error", async () => {
    const reader = await makeToken(project, ["--person", "rita", "--read-only"]);
    const other = await browser.newContext();
    try {
      const tab = await other.newPage();
      await signIn(tab, service, reader);
      await tab.locator(`[data-view="board"] [data-task-id="${task}"]`).waitFor();
      await tab.locator("header .badge.readonly").waitFor();
      assert.equal(await tab.getByRole("button", { name: "Create task" }).count(), 0);
      await tab.goto(`${service.url}/task/${task}`);
      await tab.locator('[data-view="task"]').getByRole("heading", { name: "Write the lexer by hand" }).waitFor();
      assert.equal(await tab.locator('[data-view="task"] [data-field] button').count(), 0);
      // An edit sent all the same, as the page sends one: refused, and nothing changes.
      const refused: any = await tab.evaluate(
        async ({ key, id }) => {
          const response = await fetch("/api/tools/arbeit_task_update", {
            method: "POST",
            credentials: "omit",
            headers: {
              Authorization: `Bearer ${(globalThis as any).localStorage.getItem(key)}`,
              "Content-Type": "application/json",
            },
            body: JSON.stringify({ task_id: id, title: "Renamed by a reader" }),
          });
          return response.json();
        },
        { key: KEY, id: task },
      );
      assert.equal(refused.success, false);
      assert.equal(refused.error.code, "FORBIDDEN");
      assert.match(refused.error.message, /read-only/);
      assert.equal((await project.cli(["task", "get", task])).task.title, "Write the lexer by hand");
    } finally {
      await other.close();
    }
  });

  it("signs out: the token is forgotten and the page asks for one again", async () => {
    const other = await browser.newContext();
    try {
      const tab = await other.newPage();
      await signIn(tab, service, dana);
      await tab.locator(`[data-view="board"] [data-task-id="${task}"]`).waitFor();
      await tab.getByRole("button", { name: "Sign out" }).click();
      await tab.locator('[data-view="sign-in"]').waitFor();
      assert.equal(await storedToken(tab), null);
      await tab.goto(`${service.url}/board`);
      await tab.locator('[data-view="sign-in"]').waitFor();
    } finally {
      await other.close();
    }
  });

  it("closes the live stream of a token revoked mid-session, and the page returns to sign-in", async () => {
    const erin = await makeToken(project, ["--person", "erin"]);
    const other = await browser.newContext();
    try {
      const tab = await other.newPage();
      await signIn(tab, service, erin);
      await tab.locator(`[data-view="board"] [data-task-id="${task}"]`).waitFor();
      await tab.locator(".connection.live").waitFor();
      await runCli(["token", "revoke", "erin"], { cwd: project.dir, env: project.env });
      await tab.locator('[data-view="sign-in"]').waitFor({ timeout: 15_000 });
      assert.equal(await storedToken(tab), null, "the revoked token is forgotten");
      assert.equal(await tab.locator('[data-view="board"]').count(), 0);
      assert.match(service.stderr(), /human:erin GET \/api\/live - 200/);
    } finally {
      await other.close();
    }
  });

  it("sent no request anywhere but the service", () => {
    assert.deepEqual(foreign, []);
  });
}

describe("the dashboard on arbeit serve, in Chromium, on SQLite", { skip: chromiumSkip() }, () =>
  dashboardSuite("sqlite"),
);
describe(
  "the dashboard on arbeit serve, in Chromium, on Postgres",
  {
    skip: chromiumSkip() || (await postgresSkip()),
  },
  () => dashboardSuite("postgres"),
);

describe("the dashboard on arbeit serve over HTTPS, in Chromium", {
  skip: chromiumSkip() || requirement("openssl", opensslMissing),
}, () => {
  let project: UiProject;
  let service: Service;
  let browser: Browser;

  before(async () => {
    project = await uiProject("sqlite");
    const { cert, key } = selfSigned(project.dir);
    service = await startService(project, ["--tls-cert", cert, "--tls-key", key]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    await project?.close();
  });

  it("signs in, edits from the https page (its Origin accepted) and hears live changes", async () => {
    assert.match(service.url, /^https:/);
    const task = (await project.cli(["task", "create", "--title", "Served over TLS"])).task.id;
    const sam = await makeToken(project, ["--person", "sam"]);
    // The certificate is self-signed: this browser is told to accept it, as a person would be asked to.
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      await signIn(page, service, sam);
      await page.locator(`[data-view="board"] [data-task-id="${task}"]`).waitFor();
      await page.goto(`${service.url}/task/${task}`);
      const title = page.locator('[data-view="task"] [data-field="title"]');
      await title.locator(".field-value").click();
      await title.getByRole("textbox", { name: "Title" }).fill("Served over TLS, edited");
      await title.getByRole("textbox", { name: "Title" }).press("Enter");
      await page.locator('[data-view="task"]').getByRole("heading", { name: "Served over TLS, edited" }).waitFor();
      const seen = await project.cli(["task", "get", task, "--include", "recent_events"]);
      assert.equal(seen.recent_events.at(-1).agent, "human:sam");
      await page.goto(`${service.url}/board`);
      await page.locator(".connection.live").waitFor();
      await project.cli(["task", "create", "--title", "Seen over TLS"]);
      await page.locator('[data-view="board"]').getByText("Seen over TLS").waitFor({ timeout: 10_000 });
      assert.deepEqual(await context.cookies(), []);
    } finally {
      await context.close();
    }
  });
});
