import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { holdsSecret, redactSecrets, withoutSecrets } from "../../src/domain/secrets.js";

/** Which text holds one of Arbeit's secrets, and what is stored in its place. */
const TOKEN = "arb_8pL9PhDOXFdXO1TP7r7X_1ziaAzuoVXznqkNnrZ3PAQ";
const SIGNING = "whsec_Fo7XslotvRNG6xG5EqcAudjEpri9_SH4Tumdol5hI28";
const DASHBOARD = "arbui_q3ZtR0xY8mK2vB7nL4pW9sD1fG6hJ5cX0aE3uI8oT2k";

describe("redactSecrets", () => {
  const cases: Array<[string, string]> = [
    [`Bearer ${TOKEN}`, "Bearer arb_[redacted]"],
    [`ARBEIT_TOKEN=${TOKEN}; echo`, "ARBEIT_TOKEN=arb_[redacted]; echo"],
    [`"${SIGNING}"`, '"whsec_[redacted]"'],
    [`#token=${DASHBOARD}`, "#token=arbui_[redacted]"],
    [`${TOKEN} and ${TOKEN}`, "arb_[redacted] and arb_[redacted]"],
    [`${TOKEN}trailing`, "arb_[redacted]"],
    // Not ours, or not a secret: left as they are.
    ["arb_config", "arb_config"],
    [
      "arb_compute_the_weekly_totals_for_every_customer_account",
      "arb_compute_the_weekly_totals_for_every_customer_account",
    ],
    [`x${TOKEN}`, `x${TOKEN}`],
    [TOKEN.slice(0, 40), TOKEN.slice(0, 40)],
    ["", ""],
  ];
  for (const [text, stored] of cases)
    it(`${JSON.stringify(text.slice(0, 40))} -> ${JSON.stringify(stored)}`, () => {
      assert.equal(redactSecrets(text), stored);
      assert.equal(holdsSecret(text), stored !== text);
    });
});

describe("withoutSecrets", () => {
  it("cleans every string of a JSON value, keys included, and says whether it did", () => {
    const input = { a: [1, `t ${TOKEN}`], b: { [TOKEN]: null, c: true } };
    const { value, redacted } = withoutSecrets(input);
    assert.equal(redacted, true);
    assert.deepEqual(value, { a: [1, "t arb_[redacted]"], b: { "arb_[redacted]": null, c: true } });
  });
  it("returns a value without a secret as the very same object", () => {
    const input = { a: ["x", { b: "y" }] };
    const { value, redacted } = withoutSecrets(input);
    assert.equal(redacted, false);
    assert.equal(value, input);
  });
});
