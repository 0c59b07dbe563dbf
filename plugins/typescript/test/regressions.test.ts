// Regression tests: each states what the SDK promises (its README, the Go SDK
// it mirrors) and fails where it does not hold.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { s, tool } from "../src/index";
import { harness } from "../src/testing";

const DAY_MS = 24 * 3600 * 1000;

// The host accepts any positive duration as an entry's timeout (up to
// ~292 years), and the README's Debugging section tells the user to raise
// timeout and tool_timeout while stepping. A deadline 30 days away has not
// passed after 20 ms.
test("a deadline more than 24.8 days away is not taken as passed at once", async () => {
  const h = await harness({
    name: "slow",
    async preToolCall() {
      await new Promise((r) => setTimeout(r, 20));
      return { block: { message: "no" } };
    },
  });
  try {
    assert.deepEqual(await h.preToolCall({ name: "x" }, { timeoutMs: 30 * DAY_MS }), { block: { message: "no" } });
  } finally {
    h.close();
  }
});

// The Go SDK refuses a number that overflows ("1e400 is out of range");
// JSON.parse makes it Infinity, which s.number() hands to run, and which
// encodes back as null.
test("a number argument that overflows is refused, not passed to run as Infinity", async () => {
  let ran = false;
  const t = tool({
    name: "p__t",
    description: "",
    args: s.object({ x: s.number() }),
    run: ({ x }) => {
      ran = true;
      return { x };
    },
  });
  const h = await harness({ name: "p", tools: [t] });
  try {
    const r = await h.preToolCallCanProvideResult({ name: "p__t", arguments: '{"x":1e400}' });
    assert.equal(ran, false, "run was called with x = Infinity");
    assert.equal(r?.isError, true);
    assert.match(r!.content, /out of range/);
  } finally {
    h.close();
  }
});

// README: JavaScript's own error types are bugs, reported as a panic; the
// Go SDK's NewTool turns a panic in run into "tool <name> failed: it
// panicked: ..." and logs it at ERROR with its stack. A TypeError in a
// typed tool's run reaches only the model, as if it were the tool's
// answer, and the operator's log has nothing.
test("a bug (TypeError) in a typed tool's run is logged and named as the tool's failure", async () => {
  const t = tool({
    name: "p__bug",
    description: "",
    args: s.object({}),
    run: () => {
      const o: { field: string } | undefined = undefined as { field: string } | undefined;
      return o!.field;
    },
  });
  const h = await harness({ name: "p", tools: [t] });
  try {
    const r = await h.preToolCallCanProvideResult({ name: "p__bug", arguments: "{}" });
    assert.equal(r?.isError, true);
    assert.match(JSON.parse(r!.content).error, /^tool p__bug failed/, "the model is not told which tool failed, or that it is a bug");
    assert.ok(h.logged("error").length > 0, "nothing logged: the operator never learns of the bug");
  } finally {
    h.close();
  }
});

// The Go server logs a handler's panic at DEBUG "not ERROR: the host
// already warns once per plugin, hook and kind when the call fails, and a
// handler that panics on every call must not flood its log". A wrong-shaped
// answer is the same kind of plugin bug; the SDK logs it at ERROR on every
// call.
test("a handler that answers with the wrong shape on every call does not flood the log at ERROR", async () => {
  const h = await harness({ name: "m", transformLlmOutput: () => "text" as unknown as { text: string } });
  try {
    for (let i = 0; i < 5; i++) await assert.rejects(h.transformLlmOutput({ text: "a" }), /want a TextReplacement/);
    assert.ok(h.logged("error").length <= 1, `${h.logged("error").length} ERROR lines for 5 calls`);
  } finally {
    h.close();
  }
});

// The harness is the SDK's plugintest: README says each method "resolves to
// the answer as the host decodes it". The host refuses these answers as
// malformed (hooks/validate.go) and takes them as no opinion, counting a
// failure; the harness hands them back as answers, so a plugin's own tests
// pass on answers the host drops.
test("the harness refuses answers the host refuses as malformed", async () => {
  const h = await harness({
    name: "p",
    preToolCall: () => ({ block: { message: "no" }, modifiedArgs: { a: 1 } }),
    preApiRequestMutable: () => ({ temperature: 5 }),
  });
  try {
    await assert.rejects(h.preToolCall({ name: "x", args: {} }), "more than one of block, ask and modified_args set: the host refuses it");
    await assert.rejects(h.preApiRequestMutable({}), "temperature 5 is outside [0, 2]: the host refuses it");
  } finally {
    h.close();
  }
});

// The Go plugintest applies matchers, as the host does; this harness asks
// the handler about a tool the plugin's matchers exclude, which the host
// never would.
test("the harness does not ask a tool hook about tools its matchers exclude", async () => {
  let asked = 0;
  const h = await harness({
    name: "p",
    matchers: ["read_*"],
    preToolCall: () => {
      asked++;
      return { block: { message: "no" } };
    },
  });
  try {
    assert.equal(await h.preToolCall({ name: "write_file", args: {} }), null);
    assert.equal(asked, 0, "the handler was asked about write_file");
  } finally {
    h.close();
  }
});

// README: "A method name that looks like a hook but is not one
// (preToolcall) stops the plugin at start with the list of the real ones."
// It does for an object literal, not for an instance of a class, whose
// methods live on its prototype: that plugin starts with no hook at all.
test("a misspelt hook method on a class instance stops the plugin at start", async () => {
  const { Runtime } = await import("../src/plugin");
  class Guard {
    name = "guard";
    preToolcall() {
      return { block: { message: "no" } };
    }
  }
  assert.throws(() => new Runtime(new Guard() as never), /preToolcall is not a hook/);
});

// "A plugin in 20 lines", as a new user builds it: with strict options
// `tsc --init` of the pinned TypeScript (5.9) turns on, among them
// exactOptionalPropertyTypes. The README's redactor returns
// {content, isError: ev.result.isError}, a boolean | undefined, and the
// SDK's optional properties are declared without `| undefined`.
test("the README's 20-line plugin type-checks under tsc --init's strict options", async () => {
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const { spawnSync } = await import("node:child_process");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-readme-"));
  const index = path.join(__dirname, "..", "src", "index");
  fs.writeFileSync(
    path.join(dir, "redact.ts"),
    `import { serve } from ${JSON.stringify(index)};

const email = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}/g;

serve({
  name: "redact",
  version: "1.0.0",
  transformToolResult(ev, { log }) {
    const masked = ev.result.content.replace(email, "[email]");
    if (masked === ev.result.content) return; // nothing returned: no opinion
    log.info("masked e-mail addresses", { tool: ev.name });
    return { content: masked, isError: ev.result.isError };
  },
});
`,
  );
  const tsc = path.join(__dirname, "..", "..", "node_modules", "typescript", "bin", "tsc");
  const r = spawnSync(process.execPath, [tsc, "--noEmit", "--strict", "--exactOptionalPropertyTypes", "--module", "commonjs", "--target", "es2022", "--skipLibCheck", path.join(dir, "redact.ts")], { encoding: "utf8" });
  fs.rmSync(dir, { recursive: true, force: true });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

// README: harness() "derives and checks the manifest". The host refuses a
// plugin whose tool is outside its namespace (hooks/validate.go: tool "forecast"
// is outside the plugin's namespace "wx__") unless the operator allows it;
// the harness loads it, and every test of the plugin passes.
test("the harness refuses a manifest the host refuses by default", async () => {
  const t = tool({ name: "forecast", description: "", args: s.object({}), run: () => 1 });
  await assert.rejects(harness({ name: "wx", tools: [t] }), /namespace/);
});

// README: "Globs follow Go's path.Match; matchGlob(pattern, name) applies
// them the same way". Go's path.Match returns ErrBadPattern for a class
// that starts with "-" or "]" ("[-]", "[]a]"); checkGlob accepts them and
// matchGlob quietly matches nothing (533 of 200000 random pairs differ
// from Go, all this way).
test("checkGlob refuses the patterns Go's path.Match refuses", async () => {
  const { checkGlob } = await import("../src/index");
  for (const p of ["[-]", "[]a]", "a[-b]"]) assert.throws(() => checkGlob(p), /syntax error in pattern/, p);
});
