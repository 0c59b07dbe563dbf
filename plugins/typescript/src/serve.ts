// serve(): the plugin process's side of go-plugin's contract (PROTOCOL.md):
// the magic cookie, the protocol version, AutoMTLS, the handshake line,
// health, controller, leaving with the host, and stdout kept clean.

import * as fs from "node:fs";
import type * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Worker } from "node:worker_threads";
import * as grpc from "@grpc/grpc-js";
import { handshakeCertField, serverCertificate } from "./cert";
import { fixLongServerDeadlines } from "./grpcfix";
import { serveLane, takeLane } from "./lane";
import { captureConsole, formatLine, log, setPluginLogger } from "./log";
import { Plugin, Runtime } from "./plugin";
import { addController, addHealth, addV1, addV2 } from "./server";

/** Set to 1 (or true), a plugin started by hand serves in debug mode. */
export const DEBUG_ENV = "HOOKHOST_PLUGIN_DEBUG";
/** The variable a host reads reattach configs from. */
export const REATTACH_ENV = "HOOKHOST_REATTACH_PLUGINS";

/** The handshake shared by the host and every plugin (plugins/handshake). */
export const MAGIC_COOKIE_KEY = "HOOKHOST_PLUGIN";
export const MAGIC_COOKIE_VALUE = "d3c1b0a2-hookhost-plugin-v1";
/** go-plugin's own protocol version, the handshake line's first field. */
export const CORE_PROTOCOL = 1;
/** The app protocol versions this SDK speaks, newest first. */
export const PROTOCOLS = [2, 1] as const;
/** The variable in which the host passes its pid. */
export const HOST_PID_ENV = "HOOKHOST_HOST_PID";
/** What the host may send at most (the host's wire.MaxMessageSize). */
const MAX_MESSAGE_SIZE = 256 << 20;
/** How long a plugin outlives its host at most. */
const PARENT_POLL_MS = 250;

/**
 * The parent as early as the SDK can see it, when it is first imported, so
 * that a host that dies while the plugin starts is still seen to go.
 */
const FIRST_PARENT = process.ppid;

/** Whether the host launched this process: its cookie is set. */
const launched = process.env[MAGIC_COOKIE_KEY] === MAGIC_COOKIE_VALUE;

/**
 * Whether to serve in debug mode: HOOKHOST_PLUGIN_DEBUG as Go's
 * strconv.ParseBool reads it, and never in a plugin the host launched
 * (its entry may pass the variable through; it must do the handshake).
 */
function debugMode(): boolean {
  return !launched && ["1", "t", "T", "true", "TRUE", "True"].includes(process.env[DEBUG_ENV] ?? "");
}

// A plugin the host launched (or one in debug mode) keeps stdout for its
// one line from the moment the SDK is imported: a print in the plugin's
// own module would otherwise come first and make the host refuse the
// plugin.
if (launched || debugMode()) captureConsole();

/**
 * The app protocol version to speak: the highest this SDK speaks among
 * those the host offers in PLUGIN_PROTOCOL_VERSIONS; 1 for a host that
 * offers no list (as go-plugin serves its lowest version then); null when
 * none is common.
 */
export function negotiate(offered: string | undefined): number | null {
  if (!offered) return 1;
  const versions = offered.split(",").map((v) => Number(v.trim()));
  for (const v of PROTOCOLS) if (versions.includes(v)) return v;
  return null;
}

/** Whether the host that started this plugin is gone (see PROTOCOL.md, "Exiting with the host"). */
export function hostGone(env: NodeJS.ProcessEnv = process.env, firstParent = FIRST_PARENT, ppid = process.ppid): boolean {
  const named = /^[0-9]+$/.test(env[HOST_PID_ENV] ?? "") ? Number(env[HOST_PID_ENV]) : 0;
  if (named <= 0) return ppid !== firstParent;
  // A killed host not yet reaped still has its pid; its child has been
  // re-parented already. A parent other than the host is no sign of
  // anything: a wrapper script may sit between them.
  if (named === firstParent && ppid !== firstParent) return true;
  try {
    process.kill(named, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** The directory of the plugin's socket, removed when it leaves. */
let socketDir: string | undefined;

/**
 * Exits at once, taking the plugin's own children along when it leads its
 * process group (the host starts it so). The line is written first and
 * synchronously: killing the group kills this process too.
 */
function leave(name: string, why: string): never {
  const host = process.env[HOST_PID_ENV] || String(FIRST_PARENT);
  if (socketDir !== undefined) fs.rmSync(socketDir, { recursive: true, force: true });
  try {
    fs.writeSync(2, formatLine("warn", name, `${why}; exiting`, { host_pid: host }));
  } catch {
    // the host is gone: no one reads it
  }
  killOwnCgroup();
  try {
    // ESRCH unless this process leads a group of its own.
    process.kill(-process.pid, "SIGKILL");
  } catch {
    // not a group leader: only this process goes
  }
  process.exit(0);
}

/** The variable naming the cgroup the host started the plugin in. */
const CGROUP_ENV = "HOOKHOST_CGROUP";

/**
 * Kills the cgroup the host started the plugin in (Linux, cgroup v2), and
 * with it everything the plugin spawned, even children that left its
 * process group with setsid. Only when the plugin is in the cgroup
 * HOOKHOST_CGROUP names, so that a stale variable kills nothing else.
 */
export function killOwnCgroup(env: NodeJS.ProcessEnv = process.env): void {
  const dir = env[CGROUP_ENV];
  if (!dir) return;
  try {
    const own = fs.readFileSync("/proc/self/cgroup", "utf8").split("\n").find((l) => l.startsWith("0::"));
    const p = own === undefined ? "/" : path.normalize(own.slice(3).trim());
    if (p === "/" || !path.normalize(dir).endsWith(p)) return;
    fs.writeFileSync(path.join(dir, "cgroup.kill"), "1");
  } catch {
    // no such cgroup, or not allowed: the group kill that follows remains
  }
}

function watchHost(name: string): void {
  process.on("SIGTERM", () => leave(name, "received SIGTERM (the host is gone or asked the plugin to stop)"));
  // With the host gone, writing to its pipes fails with EPIPE; that must
  // not kill the plugin before it takes its children down.
  process.stderr.on("error", () => {});
  if (hostGone()) leave(name, "the host process died before the plugin was serving");
  setInterval(() => {
    if (hostGone()) leave(name, "the host process is gone");
  }, PARENT_POLL_MS).unref();
  // The SIGTERM listener and the poll above run on the event loop, which a
  // handler stuck in synchronous code holds forever. A watchdog thread of
  // its own sees the host go too, and kills the process (and its group)
  // when the event loop has not let it leave within WATCHDOG_GRACE_MS.
  try {
    const w = new Worker(`(${watchdog.toString()})()`, {
      eval: true,
      workerData: { name, named: process.env[HOST_PID_ENV] ?? "", firstParent: FIRST_PARENT, pollMs: PARENT_POLL_MS, graceMs: WATCHDOG_GRACE_MS },
      stdout: false,
      stderr: false,
    });
    w.on("error", (e) => log.warn("the host-death watchdog thread failed; the event loop's watch remains", { error: e.message }));
    w.unref();
  } catch (e) {
    log.warn("cannot start the host-death watchdog thread; the event loop's watch remains", { error: (e as Error).message });
  }
}

/** How long the watchdog thread lets the event loop leave on its own. */
const WATCHDOG_GRACE_MS = 1000;

/**
 * The watchdog thread's code, run in a worker from its source: it imports
 * nothing from the module and repeats hostGone's rules.
 */
function watchdog(): void {
  const { workerData: d } = require("node:worker_threads");
  const fs = require("node:fs");
  const named = /^[0-9]+$/.test(d.named) ? Number(d.named) : 0;
  const gone = (): boolean => {
    const ppid = process.ppid;
    if (named <= 0) return ppid !== d.firstParent;
    if (named === d.firstParent && ppid !== d.firstParent) return true;
    try {
      process.kill(named, 0);
      return false;
    } catch (e) {
      return (e as { code?: string }).code === "ESRCH";
    }
  };
  let since = 0;
  setInterval(() => {
    if (!gone()) return;
    since = since || Date.now();
    if (Date.now() - since < d.graceMs) return;
    const line = JSON.stringify({
      "@level": "warn",
      "@message": "the host process is gone and the plugin's event loop is stuck; killing the plugin",
      "@module": d.name,
      "@timestamp": new Date().toISOString().slice(0, 23) + "000Z",
      host_pid: d.named || String(d.firstParent),
    });
    try {
      fs.writeSync(2, line + "\n");
    } catch {
      // the host is gone: no one reads it
    }
    try {
      // killOwnCgroup's rules, repeated: its cgroup, setsid children too.
      const dir: string | undefined = process.env.HOOKHOST_CGROUP;
      const own = fs.readFileSync("/proc/self/cgroup", "utf8").split("\n").find((l: string) => l.startsWith("0::"));
      const p = own === undefined ? "/" : own.slice(3).trim();
      if (dir && p !== "/" && dir.replace(/\/+$/, "").endsWith(p)) fs.writeFileSync(dir + "/cgroup.kill", "1");
    } catch {
      // no cgroup: the group kill remains
    }
    try {
      process.kill(-process.pid, "SIGKILL"); // its group, when it leads one
    } catch {
      // not a group leader
    }
    process.kill(process.pid, "SIGKILL");
  }, d.pollMs);
}

/**
 * Runs the plugin as a hookhost plugin process: call it once, from the
 * plugin's main module. It never returns control in a useful way: the
 * process serves until the host shuts it down (exit 0), the host goes away
 * (exit 0), or the plugin cannot start (exit 1, the reason on stderr).
 */
export function serve<C>(plugin: Plugin<C>): void {
  if (debugMode()) {
    serveDebug(plugin).catch((e) => {
      log.error(`plugin cannot start in debug mode: ${e instanceof Error ? e.message : String(e)}`);
      process.exit(1);
    });
    return;
  }
  if (!launched) {
    process.stderr.write(
      "This is a hookhost plugin: hookhost starts it when its name is in plugins.enabled, with\n" +
        `${MAGIC_COOKIE_KEY} set. To start it by hand (under a debugger, say), set ${DEBUG_ENV}=1:\n` +
        "it then prints a line to give hookhost. See PROTOCOL.md, section Handshake.\n",
    );
    process.exit(1);
  }
  if (process.env[DEBUG_ENV]) {
    // Through the logger: a plain line would reach the host's log at DEBUG
    // only, and plugins check warns of those.
    log.warn(`${DEBUG_ENV} is set, but the host launched this plugin: serving normally`);
  }
  const name = typeof plugin?.name === "string" && plugin.name !== "" ? plugin.name : "plugin";
  // First, before the plugin can start a process that would take the
  // variable for a lane of its own.
  const lane = takeLane(log);
  watchHost(name);
  // A Ctrl-C in the host's terminal reaches the whole process group; the
  // host decides when its plugins stop.
  process.on("SIGINT", () => {});
  start(plugin, lane).catch((e) => {
    log.error(`plugin cannot start: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}

/** The plugin's runtime, its manifest checked, its logger in place. */
function runtimeOf<C>(plugin: Plugin<C>): Runtime {
  let rt: Runtime;
  try {
    rt = new Runtime(plugin as Plugin<any>);
  } catch (e) {
    throw new Error(`invalid manifest: ${(e as Error).message}`);
  }
  setPluginLogger(rt.log);
  // One bad callback must cost one call, not the process.
  process.on("uncaughtException", (e) => rt.log.error("uncaught exception", { error: e?.stack ?? String(e) }));
  process.on("unhandledRejection", (e) => rt.log.error("unhandled promise rejection", { error: (e as Error)?.stack ?? String(e) }));
  return rt;
}

/** The gRPC server of a plugin process, every service registered but the controller. */
function newServer(rt: Runtime, version: number, lane = false): grpc.Server {
  if (version === 1 && !fixLongServerDeadlines()) {
    rt.log.debug("cannot fix @grpc/grpc-js's handling of deadlines past 24.8 days; such protocol 1 calls fail at once");
  }
  const server = new grpc.Server({ "grpc.max_receive_message_length": MAX_MESSAGE_SIZE, "grpc.max_send_message_length": -1 });
  if (version === 2) addV2(server, rt, lane);
  else addV1(server, rt);
  addHealth(server);
  return server;
}

function bind(server: grpc.Server, sock: string, creds: grpc.ServerCredentials): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    server.bindAsync("unix:" + sock, creds, (err) => (err ? reject(new Error(`cannot listen on ${sock}: ${err.message}`)) : resolve())),
  );
}

/**
 * Debug mode, for a plugin started by hand (under a debugger, say) that a
 * host attaches to (PROTOCOL.md, "Debugging a plugin"): no cookie, no
 * host to watch, no TLS (there is no client certificate to answer), and
 * instead of the handshake one line on stdout that the host takes as it
 * is. It serves until SIGINT or SIGTERM, then exits 0.
 */
async function serveDebug<C>(plugin: Plugin<C>): Promise<void> {
  const rt = runtimeOf(plugin);
  // A plugin started by hand serves the highest version unless told otherwise.
  const version = process.env.PLUGIN_PROTOCOL_VERSIONS ? negotiate(process.env.PLUGIN_PROTOCOL_VERSIONS) : PROTOCOLS[0];
  if (version === null) {
    throw new Error(`PLUGIN_PROTOCOL_VERSIONS=${process.env.PLUGIN_PROTOCOL_VERSIONS} names no version this SDK speaks (${PROTOCOLS.join(", ")})`);
  }
  // No controller: a host never shuts down a plugin it attached to.
  const server = newServer(rt, version);
  const dir = fs.mkdtempSync(path.join(process.env.PLUGIN_UNIX_SOCKET_DIR || os.tmpdir(), `${rt.manifest.name}-debug`));
  const sock = path.join(dir, "plugin.sock");
  const stop = () => {
    rt.log.info("debug mode: stopped");
    server.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  await bind(server, sock, grpc.ServerCredentials.createInsecure());
  const reattach = {
    [rt.manifest.name]: { Protocol: "grpc", ProtocolVersion: version, Pid: process.pid, Test: true, Addr: { Network: "unix", String: sock } },
  };
  fs.writeSync(
    2,
    `plugin ${rt.manifest.name} is serving in debug mode (protocol version ${version}, pid ${process.pid}); ` +
      "start hookhost with the line it prints on stdout in its environment; Ctrl-C stops it\n",
  );
  // Single-quoted for a POSIX shell; a quote inside is closed, escaped and reopened.
  fs.writeSync(1, `${REATTACH_ENV}='${JSON.stringify(reattach).replace(/'/g, "'\\''")}'\n`);
}

async function start<C>(plugin: Plugin<C>, laneSocket: net.Socket | undefined): Promise<void> {
  const rt = runtimeOf(plugin);

  const version = negotiate(process.env.PLUGIN_PROTOCOL_VERSIONS);
  if (version === null) {
    throw new Error(
      `the host offers protocol versions ${process.env.PLUGIN_PROTOCOL_VERSIONS} and this SDK speaks ${PROTOCOLS.join(", ")}; ` +
        "upgrade @hookhost/plugin or the host (see PROTOCOL.md, Protocol versions: v1 and v2)",
    );
  }
  const clientCert = process.env.PLUGIN_CLIENT_CERT ?? "";
  if (clientCert === "") {
    throw new Error("PLUGIN_CLIENT_CERT is not set: the host must start plugins with go-plugin's AutoMTLS on (see PROTOCOL.md, AutoMTLS)");
  }
  // Over protocol 1 the host closes its end after Describe; so does the plugin.
  if (version !== 2) laneSocket?.destroy();
  const lane = version === 2 && laneSocket !== undefined ? serveLane(laneSocket, rt, MAX_MESSAGE_SIZE) : undefined;
  const cert = await serverCertificate(rt.manifest.name);

  const server = newServer(rt, version, lane !== undefined);
  const dir = fs.mkdtempSync(path.join(process.env.PLUGIN_UNIX_SOCKET_DIR || os.tmpdir(), "plugin"));
  socketDir = dir;
  const sock = path.join(dir, "plugin.sock");
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    rt.log.debug("stopping: the host asked the plugin to shut down");
    const done = () => {
      lane?.close();
      fs.rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    };
    // The host has stopped sending and waits for the process to exit (and
    // kills it after 2 s): calls in flight get a moment, not more. The Hooks
    // stream stays open until the host closes it, so a graceful stop alone
    // would always wait for the force.
    const force = setTimeout(() => {
      server.forceShutdown();
      done();
    }, 100);
    server.tryShutdown(() => {
      clearTimeout(force);
      done();
    });
  };
  addController(server, shutdown);
  // Only the host, holding the key of PLUGIN_CLIENT_CERT, may connect.
  const creds = grpc.ServerCredentials.createSsl(
    Buffer.from(clientCert),
    [{ private_key: Buffer.from(cert.keyPem), cert_chain: Buffer.from(cert.certPem) }],
    true,
  );
  await bind(server, sock, creds);
  // One line, written synchronously so that it is on the pipe before
  // anything else can happen: core|app|network|address|protocol|cert.
  fs.writeSync(1, `${CORE_PROTOCOL}|${version}|unix|${sock}|grpc|${handshakeCertField(cert.der)}\n`);
  rt.log.debug("serving", { socket: sock, pid: process.pid, protocol: version });
}
