// The lane (PROTOCOL.md, "The lane"): its frames, taking its descriptor,
// and a plugin process serving it, driven as the host drives it: a socket
// pair as descriptor 3, the gRPC services beside it with AutoMTLS.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { spawn, ChildProcess } from "node:child_process";
import * as grpc from "@grpc/grpc-js";
import { serverCertificate } from "../src/cert";
import { FrameError, FrameReader, LANE_FD_ENV, serveLane, takeLane } from "../src/lane";
import { newLogger, setSink } from "../src/log";
import { Runtime } from "../src/plugin";
import { HostMessageCodec, ManifestCodec, PluginMessageCodec, rowOf } from "../src/wire";
import type { PluginMessage__Output } from "../src/generated/hookhost/plugin/v2/PluginMessage";

const INDEX = path.join(__dirname, "..", "src", "index.js");
const COOKIE = { HOOKHOST_PLUGIN: "d3c1b0a2-hookhost-plugin-v1" };
const LIMIT = 256 << 20;

function frame(body: Buffer): Buffer {
  const h = Buffer.alloc(4);
  h.writeUInt32BE(body.length);
  return Buffer.concat([h, body]);
}

/** Pushes chunks through a FrameReader and returns the frames it handed over. */
function cut(chunks: Buffer[], limit = LIMIT): Buffer[] {
  const r = new FrameReader(limit);
  const got: Buffer[] = [];
  for (const c of chunks) r.push(c, (f) => (got.push(Buffer.from(f)), true));
  return got;
}

test("lane frames: split at every byte, several in a chunk, empty ones", () => {
  const bodies = [Buffer.from("first"), Buffer.alloc(0), Buffer.from("a third, longer frame"), Buffer.alloc(0)];
  const stream = Buffer.concat(bodies.map(frame));
  assert.deepEqual(cut([stream]), bodies, "all in one chunk");
  for (let at = 0; at <= stream.length; at++) {
    assert.deepEqual(cut([stream.subarray(0, at), stream.subarray(at)]), bodies, `split at ${at}`);
  }
  assert.deepEqual(cut([...stream].map((b) => Buffer.from([b]))), bodies, "one byte a chunk");
});

test("lane frames: a length over the limit is refused before its body comes", () => {
  const r = new FrameReader(10);
  const got: Buffer[] = [];
  r.push(frame(Buffer.from("0123456789")), (f) => (got.push(f), true));
  assert.deepEqual(got, [Buffer.from("0123456789")], "a frame of the limit passes");
  const header = Buffer.alloc(4);
  header.writeUInt32BE(11);
  r.push(header.subarray(0, 3), () => true); // not yet a whole length
  assert.throws(() => r.push(header.subarray(3), () => true), FrameError);
});

test("lane frames: no frame is handed over after onFrame says stop", () => {
  const r = new FrameReader(LIMIT);
  const got: string[] = [];
  r.push(Buffer.concat([frame(Buffer.from("a")), frame(Buffer.from("b"))]), (f) => (got.push(f.toString()), false));
  assert.deepEqual(got, ["a"]);
});

test("takeLane: a variable that names no socket is a warning, and is removed", () => {
  const lines: string[] = [];
  const restore = setSink((line) => lines.push(line));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-lane-test")), "not-a-socket");
  const fd = fs.openSync(file, "w");
  try {
    const cases: [string, RegExp][] = [
      ["three", /"three" is not a descriptor the host could have handed over/],
      ["2", /"2" is not a descriptor the host could have handed over/],
      [String(fd), new RegExp(`descriptor ${fd} is not a socket`)],
    ];
    for (const [v, want] of cases) {
      lines.length = 0;
      const env: NodeJS.ProcessEnv = { [LANE_FD_ENV]: v };
      assert.equal(takeLane(newLogger("t"), env), undefined, v);
      assert.equal(env[LANE_FD_ENV], undefined, `${v}: the variable is removed`);
      assert.equal(lines.length, 1, `${v}: one line`);
      const l = JSON.parse(lines[0]);
      assert.equal(l["@level"], "warn");
      assert.match(l["@message"], want);
      assert.match(l["@message"], /its hook calls come on the Hooks stream/);
    }
    fs.writeSync(fd, "still open"); // the descriptor that was no lane is left alone
    assert.equal(takeLane(newLogger("t"), {}), undefined, "no variable, no lane");
  } finally {
    fs.closeSync(fd);
    setSink(restore);
  }
});

test("serveLane: an answer the host does not read stops the reading of calls, without losing any", async () => {
  // A connected pair of Unix sockets in this process: the plugin's end
  // served, the host's end written to and, at first, not read.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-lane-test"));
  const sockPath = path.join(dir, "lane.sock");
  const accepted = new Promise<net.Socket>((resolve) => {
    const srv = net.createServer((s) => {
      srv.close();
      resolve(s);
    });
    srv.listen(sockPath);
  });
  const hostEnd = net.connect(sockPath);
  const pluginEnd = await accepted;
  const restore = setSink(() => {});
  const big = "x".repeat(64 << 10);
  const rt = new Runtime({ name: "big", preToolCall: () => ({ block: { message: big } }) });
  const lane = serveLane(pluginEnd, rt, LIMIT);
  try {
    hostEnd.pause();
    const calls = 64; // 4 MiB of answers: more than the socket buffers
    const payload = rowOf("pre_tool_call")!.request.encode({ sessionId: "s", callId: "c", name: "t", arguments: Buffer.from("{}") });
    for (let i = 1; i <= calls; i++) {
      hostEnd.write(frame(HostMessageCodec.encode({ call: { id: String(i), stages: [{ hook: "pre_tool_call", timeoutNs: "10000000000" }], payload } })));
    }
    await until("the plugin to stop reading the lane", () => pluginEnd.isPaused());
    const got = new Set<string>();
    const frames = new FrameReader(LIMIT);
    const all = new Promise<void>((resolve) =>
      hostEnd.on("data", (c: Buffer) =>
        frames.push(c, (f) => {
          const m = PluginMessageCodec.decode(f);
          assert.ok(m.answer && m.last, `call ${m.id}: ${JSON.stringify(m.failure)}`);
          got.add(m.id ?? "0");
          if (got.size === calls) resolve();
          return true;
        }),
      ),
    );
    hostEnd.resume();
    await all;
    assert.equal(got.size, calls);
    assert.ok(!pluginEnd.isPaused(), "reading again once the answers drained");
  } finally {
    lane.close();
    hostEnd.destroy();
    setSink(restore);
  }
});

async function until(what: string, cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// --- a plugin process on its lane ---------------------------------------------------

const PLUGIN = `
const { serve } = require(${JSON.stringify(INDEX)});
serve({
  name: "laner",
  version: "1.0.0",
  async preToolCall(call, ctx) {
    if (call.name === "wait") {
      ctx.log.warn("waiting for the host to cancel");
      await new Promise((r) => ctx.signal.addEventListener("abort", r, { once: true }));
      ctx.log.warn("the wait was cancelled", { reason: ctx.signal.reason && ctx.signal.reason.name });
      return;
    }
    return { block: { message: call.name + " on " + ctx.carrier + ", variable " + (process.env.HOOKHOST_LANE_FD ?? "unset") } };
  },
});
`;

interface Plugin {
  child: ChildProcess;
  lane: net.Socket | undefined;
  client: grpc.Client;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves when the plugin's end of the lane is closed. */
  laneEnded: Promise<void>;
}

/** Starts the plugin with descriptor 3 as given (a socket pair's end by default) and env on top of the host's. */
async function startPlugin(env: NodeJS.ProcessEnv, fd3: "pipe" | number = "pipe"): Promise<Plugin> {
  const host = await serverCertificate("host");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-lane-test"));
  const script = path.join(dir, "plugin.js");
  fs.writeFileSync(script, PLUGIN);
  const child = spawn(process.execPath, [script], {
    env: { ...COOKIE, PLUGIN_CLIENT_CERT: host.certPem, PLUGIN_PROTOCOL_VERSIONS: "2", PLUGIN_UNIX_SOCKET_DIR: dir, [LANE_FD_ENV]: "3", ...env },
    stdio: ["ignore", "pipe", "pipe", fd3],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (b) => (err += b));
  child.stdout!.on("data", (b) => (out += b));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const lane = child.stdio[3] instanceof net.Socket ? child.stdio[3] : undefined;
  const laneEnded = new Promise<void>((r) => {
    if (!lane) return r();
    lane.on("end", r);
    lane.on("close", r);
    lane.on("error", r);
  });
  try {
    await until("the handshake", () => out.includes("\n") || child.exitCode !== null);
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`${(e as Error).message}; stderr: ${err}`);
  }
  const line = out.slice(0, out.indexOf("\n")).split("|");
  if (line.length !== 6) throw new Error(`no handshake: ${out} ${err}`);
  const serverPem = new crypto.X509Certificate(Buffer.from(line[5], "base64")).toString();
  const creds = grpc.credentials.createSsl(Buffer.from(serverPem), Buffer.from(host.keyPem), Buffer.from(host.certPem));
  const client = new grpc.Client("unix:" + line[3], creds, { "grpc.ssl_target_name_override": "localhost", "grpc.default_authority": "localhost" });
  return { child, lane, client, stdout: () => out, stderr: () => err, exited, laneEnded };
}

function stop(p: Plugin): void {
  p.client.close();
  p.lane?.destroy();
  p.child.kill("SIGKILL");
}

function describe(p: Plugin, version = 2): Promise<ReturnType<typeof ManifestCodec.decode>> {
  return new Promise((resolve, reject) =>
    p.client.makeUnaryRequest(`/hookhost.plugin.v${version}.Plugin/Describe`, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (e, r) =>
      e ? reject(e) : resolve(ManifestCodec.decode(r!)),
    ),
  );
}

function callMessage(id: string, name: string): Buffer {
  const payload = rowOf("pre_tool_call")!.request.encode({ sessionId: "s", callId: "c", name, arguments: Buffer.from("{}") });
  return HostMessageCodec.encode({ call: { id, stages: [{ hook: "pre_tool_call", timeoutNs: "20000000000" }], payload } });
}

/** The block message of a pre_tool_call answer. */
function blockOf(m: PluginMessage__Output): string {
  assert.ok(m.answer, `an answer, not ${JSON.stringify(m.failure)}`);
  const row = rowOf("pre_tool_call")!;
  return (row.fromResponse(row.response.decode(m.answer)) as { block: { message: string } }).block.message;
}

/** Asks tool name of the plugin on the lane; its answer. */
function onLane(p: Plugin, id: string, name: string): Promise<PluginMessage__Output> {
  const frames = new FrameReader(LIMIT);
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer) =>
      frames.push(c, (f) => {
        p.lane!.off("data", onData);
        resolve(PluginMessageCodec.decode(f));
        return false;
      });
    p.lane!.on("data", onData);
    p.lane!.once("close", () => reject(new Error(`the lane closed before the answer; stderr: ${p.stderr()}`)));
    p.lane!.write(frame(callMessage(id, name)));
  });
}

/** Asks tool name of the plugin on a gRPC Hooks stream; its answer. */
function onHooks(p: Plugin, name: string): Promise<PluginMessage__Output> {
  const s = p.client.makeBidiStreamRequest("/hookhost.plugin.v2.Plugin/Hooks", (b: Buffer) => b, (b: Buffer) => b);
  return new Promise((resolve, reject) => {
    s.on("data", (b: Buffer) => {
      resolve(PluginMessageCodec.decode(b));
      s.end();
    });
    s.on("error", reject);
    s.write(callMessage("1", name));
  });
}

test("lane: the plugin says it serves it, answers on it, and on Hooks too", { timeout: 30_000 }, async () => {
  const p = await startPlugin({});
  try {
    assert.equal((await describe(p)).lane, true, "Describe sets lane");
    const a = await onLane(p, "7", "first");
    assert.equal(a.id, "7");
    assert.equal(a.last, true);
    assert.equal(blockOf(a), "first on lane, variable unset");
    // Several calls in one write; their answers, each a whole frame.
    const frames = new FrameReader(LIMIT);
    const got = new Map<string, string>();
    await new Promise<void>((resolve) => {
      p.lane!.on("data", (c: Buffer) =>
        frames.push(c, (f) => {
          const m = PluginMessageCodec.decode(f);
          got.set(m.id ?? "", blockOf(m));
          if (got.size === 3) resolve();
          return true;
        }),
      );
      p.lane!.write(Buffer.concat(["a", "b", "c"].map((n, i) => frame(callMessage(String(10 + i), n)))));
    });
    assert.deepEqual(Object.fromEntries(got), { "10": "a on lane, variable unset", "11": "b on lane, variable unset", "12": "c on lane, variable unset" });
    p.lane!.removeAllListeners("data");
    assert.equal(blockOf(await onHooks(p, "second")), "second on grpc, variable unset");
  } finally {
    stop(p);
  }
});

test("lane: what is not the protocol ends it, and the plugin answers on Hooks", { timeout: 60_000 }, async (t) => {
  const oversize = Buffer.alloc(4);
  oversize.writeUInt32BE(LIMIT + 1);
  const cases: [string, Buffer, RegExp][] = [
    ["a frame that is no HostMessage", frame(Buffer.from([0xff, 0xff])), /the host sent a frame that is no HostMessage/],
    ["a length over the limit", oversize, new RegExp(`a frame of ${LIMIT + 1} bytes, over the plugin's limit of ${LIMIT}`)],
  ];
  for (const [what, bytes, want] of cases) {
    await t.test(what, async () => {
      const p = await startPlugin({});
      try {
        assert.equal(blockOf(await onLane(p, "1", "before")), "before on lane, variable unset");
        p.lane!.write(bytes);
        await p.laneEnded;
        // Its stderr comes through a pipe of its own, maybe later.
        await until(`a line matching ${want}`, () => want.test(p.stderr()));
        assert.equal(blockOf(await onHooks(p, "after")), "after on grpc, variable unset");
        assert.equal(p.child.exitCode, null, "the plugin still runs");
      } finally {
        stop(p);
      }
    });
  }
});

test("lane: its end of file cancels the calls it carried", { timeout: 30_000 }, async () => {
  const p = await startPlugin({});
  try {
    p.lane!.write(frame(callMessage("1", "wait")));
    await until("the call to start", () => p.stderr().includes("waiting for the host to cancel"));
    p.lane!.end();
    await until("the call to be cancelled", () => p.stderr().includes("the wait was cancelled"));
    assert.match(p.stderr(), /"reason":"HostCancelled"/);
    await p.laneEnded;
    assert.equal(blockOf(await onHooks(p, "after")), "after on grpc, variable unset");
  } finally {
    stop(p);
  }
});

test("lane: a variable that names no socket is warned of, and the plugin serves Hooks only", { timeout: 30_000 }, async (t) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-lane-test")), "file");
  fs.writeFileSync(file, "");
  const fileFd = fs.openSync(file, "r");
  t.after(() => fs.closeSync(fileFd));
  const cases: [string, NodeJS.ProcessEnv, "pipe" | number, RegExp][] = [
    ["not a number", { [LANE_FD_ENV]: "lane" }, "pipe", /HOOKHOST_LANE_FD=\\"lane\\" is not a descriptor/],
    ["stderr", { [LANE_FD_ENV]: "2" }, "pipe", /HOOKHOST_LANE_FD=\\"2\\" is not a descriptor/],
    ["a file", {}, fileFd, /descriptor 3 is not a socket/],
  ];
  for (const [what, env, fd3, want] of cases) {
    await t.test(what, async () => {
      const p = await startPlugin(env, fd3);
      try {
        assert.equal((await describe(p)).lane ?? false, false, "Describe leaves lane unset");
        await until(`a line matching ${want}`, () => want.test(p.stderr()));
        const warning = p
          .stderr()
          .split("\n")
          .filter((l) => want.test(l))
          .map((l) => JSON.parse(l));
        assert.equal(warning.length, 1, p.stderr());
        assert.equal(warning[0]["@level"], "warn");
        assert.equal(p.stdout().split("\n").filter((l) => l !== "").length, 1, "stdout holds the handshake alone");
        assert.equal(blockOf(await onHooks(p, "call")), "call on grpc, variable unset");
      } finally {
        stop(p);
      }
    });
  }
});

test("lane: over protocol 1 the plugin closes it and says nothing of it", { timeout: 30_000 }, async () => {
  const p = await startPlugin({ PLUGIN_PROTOCOL_VERSIONS: "1" });
  try {
    await p.laneEnded;
    assert.equal((await describe(p, 1)).lane ?? false, false);
  } finally {
    stop(p);
  }
});

test("lane: Shutdown with the lane still open ends the plugin cleanly (exit 0)", { timeout: 30_000 }, async () => {
  const p = await startPlugin({});
  try {
    assert.equal(blockOf(await onLane(p, "1", "x")), "x on lane, variable unset");
    await new Promise<void>((resolve, reject) =>
      p.client.makeUnaryRequest("/plugin.GRPCController/Shutdown", (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (e) => (e ? reject(e) : resolve())),
    );
    // The host's end stays open, as the host's does until the process exits.
    assert.equal(await p.exited, 0);
  } finally {
    stop(p);
  }
});
