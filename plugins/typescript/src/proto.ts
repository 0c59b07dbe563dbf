// The protocol's messages, loaded at run time from the .proto files this
// package ships (proto/, copies of the repository's plugins/proto kept
// identical by a test). Encoding and decoding go through protobufjs; the
// object shapes are the generated types under src/generated.

import * as fs from "node:fs";
import * as path from "node:path";
import * as protobuf from "protobufjs";

/** The directory holding the .proto files, inside the package. */
export const PROTO_DIR = path.join(__dirname, "..", "..", "proto");

/** The files loaded, relative to PROTO_DIR. */
export const PROTO_FILES = [
  "v1/plugin.proto",
  "v2/pluginv2.proto",
  "health/v1/health.proto",
  "goplugin/grpc_controller.proto",
];

function load(): protobuf.Root {
  const root = new protobuf.Root();
  // pluginv2.proto imports "plugin.proto", found beside it by protoc's
  // --proto_path=plugins/proto/v1.
  root.resolvePath = (origin: string, target: string): string => {
    if (path.isAbsolute(target)) return target;
    for (const dir of [path.dirname(origin), path.join(PROTO_DIR, "v1")]) {
      const p = path.join(dir, target);
      if (fs.existsSync(p)) return p;
    }
    return target;
  };
  root.loadSync(PROTO_FILES.map((f) => path.join(PROTO_DIR, f)), { keepCase: false });
  root.resolveAll();
  return root;
}

const root = load();

/** Options of every decode: 64-bit integers as strings (ids must survive
 * exactly), enums by name, bytes as Buffers, and no defaults filled in, so
 * that proto3 `optional` fields keep their presence. */
const toObjectOptions: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  bytes: Buffer,
  oneofs: true,
  defaults: false,
};

/** One message type: encode an object, decode bytes into an object. */
export interface Codec<In, Out> {
  readonly name: string;
  encode(value: In): Buffer;
  /** Throws on bytes that are not this message. */
  decode(bytes: Uint8Array): Out;
}

export function codec<In, Out>(fullName: string): Codec<In, Out> {
  const t = root.lookupType(fullName);
  return {
    name: fullName,
    encode(value: In): Buffer {
      const msg = t.fromObject(wellFormed(value) as { [k: string]: unknown });
      const bytes = t.encode(msg).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    decode(bytes: Uint8Array): Out {
      return t.toObject(t.decode(bytes), toObjectOptions) as Out;
    },
  };
}

/**
 * The value with every string made well-formed UTF-16: a lone surrogate
 * would otherwise be encoded as bytes that are not UTF-8, and the host
 * refuses a whole message for one such string field. Buffers (bytes fields)
 * are left alone.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATE_G = new RegExp(LONE_SURROGATE.source, "g");

/** s with every lone surrogate replaced by U+FFFD. */
export function wellFormedText(s: string): string {
  return LONE_SURROGATE.test(s) ? s.replace(LONE_SURROGATE_G, "\ufffd") : s;
}

function wellFormed(v: unknown): unknown {
  // Most answers need no repair: they are encoded as they are, uncopied.
  return plainAndWellFormed(v) ? v : repaired(v);
}

/**
 * Whether repaired(v) would hold the same as v: v has no lone surrogate,
 * and nothing but primitives, byte arrays, arrays without holes, and
 * objects of Object's prototype (or none) without inherited enumerable
 * keys, the only objects repaired() copies as they are.
 */
function plainAndWellFormed(v: unknown): boolean {
  if (typeof v === "string") return !LONE_SURROGATE.test(v);
  if (v === null || typeof v !== "object" || v instanceof Uint8Array) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!(i in v) || !plainAndWellFormed(v[i])) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in v) {
    if (!Object.prototype.hasOwnProperty.call(v, k)) return false;
    if (!plainAndWellFormed((v as { [k: string]: unknown })[k])) return false;
  }
  return true;
}

function repaired(v: unknown): unknown {
  if (typeof v === "string") return wellFormedText(v);
  if (Array.isArray(v)) return v.map(repaired);
  if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
    const out: { [k: string]: unknown } = {};
    for (const [k, x] of Object.entries(v)) out[k] = repaired(x);
    return out;
  }
  return v;
}
