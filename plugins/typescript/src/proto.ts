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
  if (typeof v === "string") return wellFormedText(v);
  if (Array.isArray(v)) return v.map(wellFormed);
  if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
    const out: { [k: string]: unknown } = {};
    for (const [k, x] of Object.entries(v)) out[k] = wellFormed(x);
    return out;
  }
  return v;
}
