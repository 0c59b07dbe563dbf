// serve() as a process, driven the way go-plugin's client drives it: the
// handshake line, AutoMTLS with a client certificate, health, Describe,
// Shutdown, and what it does without the host's certificate. The Go tests
// (conformance, tscache) do the same under the real host.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawn, ChildProcess } from "node:child_process";
import * as grpc from "@grpc/grpc-js";
import { serverCertificate } from "../src/cert";
import { ManifestCodec } from "../src/wire";

const INDEX = path.join(__dirname, "..", "src", "index.js");
const COOKIE = { HOOKHOST_PLUGIN: "d3c1b0a2-hookhost-plugin-v1" };

interface Started {
  child: ChildProcess;
  line: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(env: NodeJS.ProcessEnv): Promise<Started> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-serve-test"));
  const script = path.join(dir, "plugin.js");
  fs.writeFileSync(
    script,
    `const { serve } = require(${JSON.stringify(INDEX)});
     console.log("a stray print");
     serve({ name: "probe", version: "3.1.4", preToolCall: () => undefined });`,
  );
  const child = spawn(process.execPath, [script], { env: { ...env, PLUGIN_UNIX_SOCKET_DIR: dir }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr!.on("data", (b) => (err += b));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (b) => {
      out += b;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve({ child, line: out.slice(0, nl), stderr: () => err, exited });
    });
    exited.then((code) => reject(new Error(`plugin exited ${code} before its handshake: ${err}`)));
    setTimeout(() => reject(new Error(`no handshake within 10s: ${err}`)), 10_000).unref();
  });
}

function unary(client: grpc.Client, method: string, req: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(method, (b: Buffer) => b, (b: Buffer) => b, req, (e, r) => (e ? reject(e) : resolve(r!))),
  );
}

function clientFor(sock: string, serverDer: Buffer, clientKey?: string, clientCert?: string): grpc.Client {
  const serverPem = new crypto.X509Certificate(serverDer).toString();
  const creds = grpc.credentials.createSsl(Buffer.from(serverPem), clientKey ? Buffer.from(clientKey) : null, clientCert ? Buffer.from(clientCert) : null);
  return new grpc.Client("unix:" + sock, creds, { "grpc.ssl_target_name_override": "localhost", "grpc.default_authority": "localhost" });
}

test("serve: handshake, AutoMTLS, health, Describe, Shutdown", async () => {
  const host = await serverCertificate("host");
  const p = await start({ ...COOKIE, PLUGIN_CLIENT_CERT: host.certPem, PLUGIN_PROTOCOL_VERSIONS: "1,2" });
  try {
    const fields = p.line.split("|");
    assert.equal(fields.length, 6, p.line);
    assert.deepEqual(fields.slice(0, 3), ["1", "2", "unix"]);
    assert.equal(fields[4], "grpc");
    assert.ok(!fields[5].endsWith("="), "unpadded base64");
    const der = Buffer.from(fields[5], "base64");
    assert.equal(new crypto.X509Certificate(der).checkHost("localhost"), "localhost");
    const sock = fields[3];
    assert.ok(fs.statSync(sock).isSocket());

    const c = clientFor(sock, der, host.keyPem, host.certPem);
    const health = await unary(c, "/grpc.health.v1.Health/Check", Buffer.from([0x0a, 6, ...Buffer.from("plugin")]));
    assert.deepEqual([...health], [0x08, 0x01], "SERVING");
    await assert.rejects(unary(c, "/grpc.health.v1.Health/Check", Buffer.from([0x0a, 1, 0x78])), (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND);
    const m = ManifestCodec.decode(await unary(c, "/hookhost.plugin.v2.Plugin/Describe", Buffer.alloc(0)));
    assert.equal(m.name, "probe");
    assert.equal(m.version, "3.1.4");
    assert.deepEqual(m.hooks, ["pre_tool_call"]);

    // Only the holder of PLUGIN_CLIENT_CERT's key may connect.
    const anon = clientFor(sock, der);
    await assert.rejects(unary(anon, "/grpc.health.v1.Health/Check", Buffer.alloc(0)));
    anon.close();
    const stranger = await serverCertificate("stranger");
    const other = clientFor(sock, der, stranger.keyPem, stranger.certPem);
    await assert.rejects(unary(other, "/grpc.health.v1.Health/Check", Buffer.alloc(0)));
    other.close();

    await unary(c, "/plugin.GRPCController/Shutdown", Buffer.alloc(0));
    c.close();
    assert.equal(await p.exited, 0);
    assert.ok(!fs.existsSync(sock), "the socket is removed");
    // The stray print went to the log, not to stdout.
    assert.match(p.stderr(), /"@message":"a stray print"/);
  } finally {
    p.child.kill("SIGKILL");
  }
});

test("serve: protocol 1 when the host offers only 1", async () => {
  const host = await serverCertificate("host");
  const p = await start({ ...COOKIE, PLUGIN_CLIENT_CERT: host.certPem, PLUGIN_PROTOCOL_VERSIONS: "1" });
  try {
    assert.equal(p.line.split("|")[1], "1");
    const c = clientFor(p.line.split("|")[3], Buffer.from(p.line.split("|")[5], "base64"), host.keyPem, host.certPem);
    const m = ManifestCodec.decode(await unary(c, "/hookhost.plugin.v1.Plugin/Describe", Buffer.alloc(0)));
    assert.equal(m.name, "probe");
    c.close();
    // SIGTERM (the host's parent-death signal) makes it leave.
    p.child.kill("SIGTERM");
    assert.equal(await p.exited, 0);
    assert.match(p.stderr(), /received SIGTERM/);
    assert.ok(!fs.existsSync(path.dirname(p.line.split("|")[3])), "the socket's directory is removed");
  } finally {
    p.child.kill("SIGKILL");
  }
});

test("serve: without the host's certificate it says so and exits 1, stdout untouched", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-serve-test"));
  const child = spawn(process.execPath, ["-e", `require(${JSON.stringify(INDEX)}).serve({ name: "probe" })`], {
    env: { ...COOKIE, PLUGIN_UNIX_SOCKET_DIR: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (err += b));
  const code = await new Promise((r) => child.on("exit", r));
  assert.equal(code, 1);
  assert.equal(out, "");
  assert.match(err, /PLUGIN_CLIENT_CERT is not set/);
  assert.match(JSON.parse(err.trim().split("\n").pop()!)["@level"], /error/);
});

test("serve: an invalid manifest is refused before the handshake", async () => {
  const host = await serverCertificate("host");
  const child = spawn(process.execPath, ["-e", `require(${JSON.stringify(INDEX)}).serve({ name: "probe", tools: [{ name: "bad name", description: "" }] })`], {
    env: { ...COOKIE, PLUGIN_CLIENT_CERT: host.certPem },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (err += b));
  const code = await new Promise((r) => child.on("exit", r));
  assert.equal(code, 1);
  assert.equal(out, "");
  assert.match(err, /plugin cannot start: invalid manifest: tool name \\"bad name\\" must match/);
});

test("serve: debug mode prints the reattach line and serves without TLS until SIGTERM", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hookhost-serve-test"));
  const child = spawn(process.execPath, ["-e", `require(${JSON.stringify(INDEX)}).serve({ name: "probe", version: "9" })`], {
    env: { HOOKHOST_PLUGIN_DEBUG: "1", PLUGIN_UNIX_SOCKET_DIR: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (b) => (err += b));
  const exited = new Promise((r) => child.on("exit", r));
  try {
    const line = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (b) => {
        out += b;
        if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
      });
      setTimeout(() => reject(new Error(`no line: ${err}`)), 10_000).unref();
    });
    const m = /^HOOKHOST_REATTACH_PLUGINS='(.*)'$/.exec(line);
    assert.ok(m, line);
    const rc = JSON.parse(m[1]).probe;
    assert.deepEqual({ ...rc, Addr: undefined }, { Protocol: "grpc", ProtocolVersion: 2, Pid: child.pid, Test: true, Addr: undefined });
    assert.equal(rc.Addr.Network, "unix");
    const c = new grpc.Client("unix:" + rc.Addr.String, grpc.credentials.createInsecure());
    const man = ManifestCodec.decode(await unary(c, "/hookhost.plugin.v2.Plugin/Describe", Buffer.alloc(0)));
    assert.equal(man.version, "9");
    assert.match(err, /serving in debug mode \(protocol version 2/);
    c.close();
    child.kill("SIGTERM");
    assert.equal(await exited, 0);
  } finally {
    child.kill("SIGKILL");
  }
});

test("serve: a plugin the host launched ignores HOOKHOST_PLUGIN_DEBUG", async () => {
  const host = await serverCertificate("host");
  const p = await start({ ...COOKIE, HOOKHOST_PLUGIN_DEBUG: "1", PLUGIN_CLIENT_CERT: host.certPem, PLUGIN_PROTOCOL_VERSIONS: "2" });
  try {
    assert.match(p.line, /^1\|2\|unix\|/);
  } finally {
    p.child.kill("SIGKILL");
  }
});
