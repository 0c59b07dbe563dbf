// Logging in the shape the host reads: one hclog JSON object per line on
// stderr, which go-plugin parses and re-logs at the line's level under the
// plugin's name. stdout belongs to the handshake and is never written.

import * as fs from "node:fs";
import * as util from "node:util";

/** hclog's levels, lowest first. */
export type Level = "trace" | "debug" | "info" | "warn" | "error";

/** Extra key/value pairs of a log line. */
export type Fields = { [key: string]: unknown };

export interface Logger {
  trace(message: string, fields?: Fields): void;
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** A logger whose lines carry `fields` too. */
  with(fields: Fields): Logger;
}

/** Where log lines go; the test harness captures them. */
export type Sink = (line: string, level: Level, message: string, fields: Fields) => void;

/** Writes the line to stderr synchronously, so that a line logged just
 * before the process exits is not lost. A host that died closed the pipe:
 * losing the line then is better than dying on it. */
export const stderrSink: Sink = (line) => {
  try {
    fs.writeSync(2, line);
  } catch {
    // nothing to do: no one reads it
  }
};

let sink: Sink = stderrSink;

/** Sends every logger's lines to `s` (the test harness uses this). */
export function setSink(s: Sink): Sink {
  const old = sink;
  sink = s;
  return old;
}

/** hclog's JSON timestamp layout, 2006-01-02T15:04:05.000000Z07:00: the
 * host refuses a line whose timestamp does not parse, and then logs the
 * whole line as plain text. */
function timestamp(d: Date): string {
  return d.toISOString().slice(0, 23) + "000Z";
}

function plain(v: unknown): unknown {
  if (v instanceof Error) return v.message;
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "function" || typeof v === "symbol") return String(v);
  return v;
}

/** One hclog JSON line. */
export function formatLine(level: Level, module: string, message: string, fields: Fields): string {
  const entry: { [k: string]: unknown } = {};
  for (const [k, v] of Object.entries(fields)) {
    // hclog's own keys start with @; a field must not replace them.
    entry[k.startsWith("@") ? k.slice(1) : k] = plain(v);
  }
  entry["@level"] = level;
  entry["@message"] = message;
  entry["@module"] = module;
  entry["@timestamp"] = timestamp(new Date());
  let line: string;
  try {
    line = JSON.stringify(entry);
  } catch {
    // A field that does not encode (a cycle): the fields as text.
    line = JSON.stringify({ "@level": level, "@message": message, "@module": module, "@timestamp": entry["@timestamp"], fields: util.inspect(fields) });
  }
  return line + "\n";
}

export function newLogger(module: string, base: Fields = {}): Logger {
  const emit = (level: Level) => (message: string, fields?: Fields) => {
    const all = fields ? { ...base, ...fields } : base;
    sink(formatLine(level, module, String(message), all), level, String(message), all);
  };
  return {
    trace: emit("trace"),
    debug: emit("debug"),
    info: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
    with: (fields) => newLogger(module, { ...base, ...fields }),
  };
}

/** The plugin's logger, named after it once serve() or the harness knows its name. */
export let log: Logger = newLogger("plugin");

/** @internal */
export function setPluginLogger(l: Logger): void {
  log = l;
}

/**
 * Routes console.log and friends to the log at their levels, so that a
 * stray print reaches the host as a log line instead of corrupting the
 * handshake on stdout. Anything else written to process.stdout goes to
 * stderr as it is.
 */
export function captureConsole(): void {
  const at = (level: Level) => (...args: unknown[]) => log[level](util.format(...args));
  console.log = at("info");
  console.info = at("info");
  console.debug = at("debug");
  console.trace = at("trace");
  console.warn = at("warn");
  console.error = at("error");
  process.stdout.write = ((chunk: string | Uint8Array, encoding?: any, cb?: any): boolean =>
    process.stderr.write(chunk as any, encoding, cb)) as typeof process.stdout.write;
}
