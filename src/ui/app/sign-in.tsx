/** Signing in to the dashboard of `arbeit serve` with a person's token. */
import { useState } from "preact/hooks";
import type { Envelope, Me } from "../contract.js";
import { signIn } from "./token.js";

type Problem = { code: string; message: string };

/**
 * Asks the service who `token` is (GET /api/me, the token sent as a Bearer header); the problem
 * when it refuses it. Nothing is kept until the service accepts the token.
 */
async function check(token: string): Promise<Problem | undefined> {
  let response: Response;
  try {
    response = await fetch("/api/me", {
      credentials: "omit",
      cache: "no-store",
      headers: { Authorization: `Bearer ${token}`, Accept: "application/json" },
    });
  } catch {
    return { code: "OFFLINE", message: "The service cannot be reached." };
  }
  const body = (await response.json().catch(() => undefined)) as Envelope<Me> | undefined;
  if (response.ok && body?.success) return undefined;
  if (body && !body.success) return { code: body.error.code, message: body.error.message };
  return { code: `HTTP_${response.status}`, message: `The service answered ${response.status}.` };
}

/** The sign-in form: shown when the page holds no token, or the service refused the one it held. */
export function SignIn() {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem>();

  const submit = async (event: Event) => {
    event.preventDefault();
    const given = token.trim();
    if (given === "") {
      setProblem({ code: "INVALID_ARGUMENT", message: "Paste your token first." });
      return;
    }
    setBusy(true);
    setProblem(undefined);
    const refused = await check(given);
    setBusy(false);
    if (refused) setProblem(refused);
    else signIn(given);
  };

  return (
    <main id="main">
      <section data-view="sign-in" class="panel sign-in">
        <h1>Sign in to Arbeit</h1>
        <p>
          Paste your own token (<code>arb_…</code>), the one made for you with{" "}
          <code>arbeit token create --person NAME</code>. This browser keeps it for this address only, never in a
          cookie, until you sign out.
        </p>
        <form onSubmit={submit}>
          <label>
            Token
            <input
              type="password"
              name="token"
              autocomplete="off"
              spellcheck={false}
              value={token}
              onInput={(event) => setToken((event.target as HTMLInputElement).value)}
            />
          </label>
          <div class="form-actions">
            <button type="submit" disabled={busy}>
              Sign in
            </button>
          </div>
        </form>
        {problem && (
          <div class="alert" role="alert">
            <strong>{problem.code}</strong> {problem.message}
          </div>
        )}
      </section>
    </main>
  );
}
