import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  onlyChanged,
  reasonPrompt,
  reasonsAnswer,
  serverCommand,
  statusText,
  toServerSettings,
  truncate,
} from "../src/logic";

test("flat settings become conductor.toml's shape", () => {
  const nested = toServerSettings({
    "conductor.backend": "openai",
    "conductor.max_steps": 3,
    "budget.max_cost": 0.5,
    "workers": { fast: { provider: "openai-compatible", model: "qwen" } },
    preview: true,
    logFile: "/tmp/server.log",
    "server.command": ["x"],
  });
  assert.deepEqual(nested, {
    conductor: { backend: "openai", max_steps: 3 },
    budget: { max_cost: 0.5 },
    workers: { fast: { provider: "openai-compatible", model: "qwen" } },
    preview: true,
    logFile: "/tmp/server.log",
  });
});

test("empty worker tables and unset values are left out", () => {
  assert.deepEqual(toServerSettings({ workers: {}, "test.command": undefined }), {});
});

test("defaults are dropped so the workspace file wins", () => {
  assert.deepEqual(onlyChanged({ a: 1, b: [1, 2], c: "x" }, { a: 1, b: [1, 2], c: "y" }), { c: "x" });
});

test("status bar text", () => {
  assert.equal(statusText([]), "$(check) Conductor");
  assert.equal(statusText([{ token: "t", title: "Conductor: fix a.py", message: "step 0" }]),
    "$(sync~spin) Conductor: fix a.py: step 0");
  assert.equal(statusText([{ token: "a", title: "x" }, { token: "b", title: "y" }]),
    "$(sync~spin) Conductor: 2 jobs");
  assert.equal(truncate("abcdef", 4), "abc…");
});

test("server command is checked", () => {
  assert.deepEqual(serverCommand(["conductor-lsp", "serve"]), { command: "conductor-lsp", args: ["serve"] });
  assert.throws(() => serverCommand([]), /non-empty list/);
  assert.throws(() => serverCommand("conductor-lsp serve"), /non-empty list/);
});

const HUNKS = [
  { index: 0, path: "calc.py", label: "calc.py:2", diff: "@@ -2 +2 @@\n-    return a - b\n+    return a + b\n" },
  { index: 3, path: "calc.py", label: "calc.py:6", diff: "--- a/calc.py\n+++ b/calc.py\n-    return a + b\n+    return eval(x)\n" },
];

test("the reasons prompt names the hunk and its first changed line", () => {
  assert.equal(reasonPrompt(HUNKS[1], 2, 2), "Why not calc.py:6 (2 of 2)? -    return a + b");
  assert.equal(reasonPrompt(HUNKS[0], 1, 1), "Why not calc.py:2? -    return a - b");
});

test("reasons go back as a list by hunk index; blanks dropped; again needs a reason", () => {
  assert.deepEqual(reasonsAnswer(HUNKS, ["", " no eval "], true), {
    reasons: [{ index: 3, reason: "no eval" }],
    again: true,
  });
  assert.deepEqual(reasonsAnswer(HUNKS, [undefined], true), { reasons: [], again: false });
});
