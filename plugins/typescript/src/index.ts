// @hookhost/plugin: write a hookhost plugin in TypeScript.
//
//     import { serve } from "@hookhost/plugin";
//     serve({
//       name: "guard",
//       version: "1.0.0",
//       preToolCall(call) {
//         if (call.name === "delete_everything") return { block: { message: "not here" } };
//         // nothing returned: no opinion
//       },
//     });
//
// See README.md for every hook, tools, config, logging and testing, and
// PROTOCOL.md at the top of the repository for the contract serve() keeps.

export { serve, negotiate, hostGone, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, PROTOCOLS, HOST_PID_ENV } from "./serve";
export type { Plugin, Hooks, HookContext, Carrier, ConfigureContext, Manifest, Answer, Observed, FailureKind, Unserved } from "./plugin";
export { asJSON } from "./plugin";
export { tool, Tool, errorResult } from "./tool";
export type { ToolOptions } from "./tool";
export { s, Schema, ObjectSchema, StringSchema, NumberSchema, BooleanSchema, ArraySchema, RecordSchema, AnySchema, decodeValue, problemsText } from "./schema";
export type { Infer, InferShape, Shape, SchemaProblem, Optional, Defaulted } from "./schema";
export { log, newLogger } from "./log";
export type { Logger, Level, Fields } from "./log";
export { matchGlob, checkGlob, BadPattern } from "./glob";
export * from "./types";
export { HOOK_NAMES, OBSERVERS, TOOL_HOOKS } from "./generated/catalogue";
