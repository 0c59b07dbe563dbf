// The lane (PROTOCOL.md, "The lane"): a connected Unix stream socket the
// host hands a plugin process it starts, as an inherited descriptor named
// by HOOKHOST_LANE_FD. It carries the Hooks stream's messages, each after a
// 4-byte big-endian length; a plugin that serves it says so in its
// manifest, and the host then sends its hook calls there instead of on the
// gRPC stream, which in Node costs several times the call itself.

import * as fs from "node:fs";
import * as net from "node:net";
import type { Logger } from "./log";
import type { Runtime } from "./plugin";
import { HookStream } from "./server";

/** The variable naming the descriptor of the lane. */
export const LANE_FD_ENV = "HOOKHOST_LANE_FD";

/** A frame's length prefix. */
const HEADER = 4;

/** O_CLOEXEC as /proc/self/fdinfo's (octal) flags show it on Linux. */
const O_CLOEXEC = 0o2000000;

/**
 * Takes the lane the host handed this process, or none. The variable is
 * removed in every case, so that a process the plugin starts does not
 * think it was handed a lane. A variable that names no socket is logged
 * as a warning, and the plugin serves its calls on gRPC alone.
 *
 * Node marks every descriptor it inherits close-on-exec as it starts
 * (libuv's uv_disable_stdio_inheritance), so no process the plugin starts
 * inherits the lane; a runtime that did not (Node embedded without it) is
 * seen on Linux from /proc, and its lane is left unserved rather than
 * handed to the plugin's children.
 */
export function takeLane(log: Logger, env: NodeJS.ProcessEnv = process.env): net.Socket | undefined {
  const v = env[LANE_FD_ENV];
  if (v === undefined) return undefined;
  delete env[LANE_FD_ENV];
  const refuse = (why: string) => {
    log.warn(`the plugin cannot serve the host's lane (${why}); its hook calls come on the Hooks stream`, { [LANE_FD_ENV]: v });
    return undefined;
  };
  if (!/^[0-9]+$/.test(v) || Number(v) < 3) return refuse(`${LANE_FD_ENV}=${JSON.stringify(v)} is not a descriptor the host could have handed over`);
  const fd = Number(v);
  try {
    // bigint: on Node 20 a plain fstatSync here made the require()s that
    // follow resolve a symlinked node_modules by the link's path rather
    // than its target, loading second copies of modules already loaded.
    if (!fs.fstatSync(fd, { bigint: true }).isSocket()) return refuse(`descriptor ${fd} is not a socket`);
  } catch (e) {
    return refuse(`descriptor ${fd}: ${(e as Error).message}`);
  }
  if (inheritable(fd)) return refuse(`descriptor ${fd} is not close-on-exec, so the plugin's children would hold the lane open`);
  try {
    return new net.Socket({ fd, readable: true, writable: true });
  } catch (e) {
    return refuse(`descriptor ${fd}: ${(e as Error).message}`);
  }
}

/** Whether fd is known to be inherited by the processes this one starts; false where /proc does not say. */
function inheritable(fd: number): boolean {
  let info: string;
  try {
    info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
  } catch {
    return false;
  }
  const m = /^flags:\s*([0-7]+)$/m.exec(info);
  return m !== null && (parseInt(m[1], 8) & O_CLOEXEC) === 0;
}

/** What FrameReader.push found wrong; the lane cannot go on after it. */
export class FrameError extends Error {}

/**
 * Cuts a byte stream into frames. A chunk may hold part of a frame or
 * several; each byte is copied at most once (a frame within one chunk is
 * not copied at all), and a frame over the limit is refused from its
 * length, before any of its body is kept.
 */
export class FrameReader {
  private readonly chunks: Buffer[] = [];
  /** Where the unread bytes start in chunks[0]. */
  private offset = 0;
  private buffered = 0;

  constructor(private readonly limit: number) {}

  /**
   * Adds chunk and hands each whole frame to onFrame, in order, until
   * onFrame returns false (the frames after it are not read). Throws
   * FrameError for a frame over the limit.
   */
  push(chunk: Buffer, onFrame: (frame: Buffer) => boolean): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= HEADER) {
      const size = this.length();
      if (size > this.limit) throw new FrameError(`the host sent a frame of ${size} bytes, over the plugin's limit of ${this.limit}`);
      if (this.buffered < HEADER + size) return;
      this.skip(HEADER);
      if (!onFrame(this.take(size))) return;
    }
  }

  /** The length prefix of the next frame; at least HEADER bytes are buffered. */
  private length(): number {
    const first = this.chunks[0];
    if (first.length - this.offset >= HEADER) return first.readUInt32BE(this.offset);
    const head = Buffer.allocUnsafe(HEADER);
    let got = 0;
    for (let i = 0, off = this.offset; got < HEADER; i++, off = 0) {
      got += this.chunks[i].copy(head, got, off, Math.min(this.chunks[i].length, off + HEADER - got));
    }
    return head.readUInt32BE(0);
  }

  private skip(n: number): void {
    this.buffered -= n;
    while (n > 0) {
      const left = this.chunks[0].length - this.offset;
      if (n < left) {
        this.offset += n;
        return;
      }
      n -= left;
      this.chunks.shift();
      this.offset = 0;
    }
  }

  /** The next n bytes, buffered already. */
  private take(n: number): Buffer {
    const first = this.chunks[0];
    if (n === 0) return Buffer.alloc(0);
    if (first.length - this.offset >= n) {
      const b = first.subarray(this.offset, this.offset + n);
      this.skip(n);
      return b;
    }
    const b = Buffer.allocUnsafe(n);
    let got = 0;
    while (got < n) {
      const c = this.chunks[0];
      const k = c.copy(b, got, this.offset, Math.min(c.length, this.offset + n - got));
      got += k;
      this.skip(k);
    }
    return b;
  }
}

/** A lane being served. */
export interface ServedLane {
  /** Ends the lane: its calls are cancelled and the socket closed. */
  close(): void;
}

/**
 * Serves a HookStream on the lane socket until it ends: at end of file,
 * on an error, or when the host sends what is not the protocol (a frame
 * over limit bytes, or one that is no HostMessage). The calls it carried
 * are then cancelled and the socket closed; the gRPC Hooks stream, which
 * the host falls back on, is not concerned.
 *
 * The answers that become ready together (those of the calls one chunk
 * carried, say) go out as one write of whole frames: the write waits for
 * the promise callbacks queued at the time, no longer. When the socket's
 * buffer is over its high-water mark (socket.write returned false: the
 * host does not read), the lane is not read until it drains, so that no
 * new call adds answers to memory: what is held then is bounded by the
 * calls in flight, and the host's own writes wait on the socket instead.
 */
export function serveLane(socket: net.Socket, rt: Runtime, limit: number): ServedLane {
  const frames = new FrameReader(limit);
  let held: Buffer[] = [];
  let heldBytes = 0;
  let flushing = false;
  let draining = false;
  let over = false;

  const flush = () => {
    flushing = false;
    if (over || draining || held.length === 0) return;
    const out = Buffer.allocUnsafe(heldBytes + HEADER * held.length);
    let at = 0;
    for (const body of held) {
      at = out.writeUInt32BE(body.length, at);
      at += body.copy(out, at);
    }
    held = [];
    heldBytes = 0;
    if (!socket.write(out)) {
      draining = true;
      socket.pause();
      socket.once("drain", () => {
        draining = false;
        if (over) return;
        socket.resume();
        flush();
      });
    }
  };
  const hs = new HookStream(
    rt,
    (body) => {
      if (over) return;
      held.push(body);
      heldBytes += body.length;
      if (!flushing) {
        flushing = true;
        // After the promise callbacks queued now (Node runs its tick queue
        // once they are done): what they answer joins this write.
        process.nextTick(flush);
      }
    },
    "lane",
  );

  const end = (why: string, level: "debug" | "warn" = "debug") => {
    if (over) return;
    over = true;
    rt.log[level](`the host's lane ended (${why}); hook calls now come on the Hooks stream`);
    hs.close();
    held = [];
    socket.destroy();
  };
  socket.on("data", (chunk: Buffer) => {
    if (over) return;
    try {
      frames.push(chunk, (frame) => {
        if (hs.receive(frame)) return true;
        end("the host sent a frame that is no HostMessage", "warn");
        return false;
      });
    } catch (e) {
      if (!(e instanceof FrameError)) throw e;
      end(e.message, "warn");
    }
  });
  socket.on("end", () => end("end of file"));
  socket.on("error", (e) => end(e.message, "warn"));
  socket.on("close", () => end("closed"));
  return { close: () => end("the plugin is stopping") };
}
