// Typed tools: a tool written as a function, whose argument type follows
// from its schema. The SDK declares it in the manifest, decodes the model's
// arguments strictly and answers pre_tool_call_can_provide_result for it.

import { isBug } from "./bug";
import type { HookContext } from "./plugin";
import { decodeText, InferShape, ObjectSchema, problemsText, Shape } from "./schema";
import type { ToolResult, ToolSpec } from "./types";

/** What a typed tool is declared with. */
export interface ToolOptions<S extends Shape> {
  /** The tool's name, "<plugin>__<tool>" unless the host allows otherwise. */
  name: string;
  description: string;
  /** The arguments, an object schema built with `s`. */
  args: ObjectSchema<S>;
  /**
   * Runs the tool. Its value, encoded as JSON, is the result; a throw or a
   * rejection is an error result {"error": <message>}.
   */
  run(args: InferShape<S>, ctx: HookContext): unknown | Promise<unknown>;
}

/** A typed tool; list it in the plugin's `tools`. */
export class Tool<S extends Shape = Shape> {
  readonly spec: ToolSpec;
  constructor(private readonly opts: ToolOptions<S>) {
    if (typeof opts.run !== "function") throw new Error(`tool(${JSON.stringify(opts.name)}): run is not a function`);
    if (!(opts.args instanceof ObjectSchema)) throw new Error(`tool(${JSON.stringify(opts.name)}): args must be s.object({...})`);
    this.spec = { name: opts.name, description: opts.description, inputSchema: opts.args.toJSONSchema() };
  }

  /** The tool's name. */
  get name(): string {
    return this.spec.name;
  }

  /**
   * Runs the tool on the model's raw arguments exactly as the SDK does when
   * the host asks for its result: never throws, always a result.
   */
  async call(rawArguments: string, ctx: HookContext): Promise<ToolResult> {
    const name = this.spec.name;
    const decoded = decodeText(this.opts.args, rawArguments, "args");
    if (!decoded.ok) return errorResult(`tool ${name}: arguments: ${problemsText(decoded.problems)}`);
    let value: unknown;
    try {
      value = await this.opts.run(decoded.value, ctx);
    } catch (e) {
      if (!isBug(e)) return errorResult((e as Error).message);
      // A bug, not the tool's answer: say which tool and that it is one,
      // and tell the operator, as the Go SDK does for a panic in a tool.
      const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      ctx.log.error("tool failed with a bug", { tool: name, error: text, stack: e instanceof Error ? e.stack : undefined });
      return errorResult(`tool ${name} failed: it panicked: ${text}`);
    }
    let content: string | undefined;
    try {
      content = JSON.stringify(value === undefined ? null : value);
    } catch (e) {
      ctx.log.error("tool result cannot be encoded as JSON", { tool: name, error: (e as Error).message });
      return errorResult(`tool ${name}: its result cannot be encoded as JSON: ${(e as Error).message}`);
    }
    if (content === undefined) {
      return errorResult(`tool ${name}: its result cannot be encoded as JSON: a ${typeof value} has no JSON form`);
    }
    return { content };
  }
}

/** Declares a typed tool. */
export function tool<S extends Shape>(opts: ToolOptions<S>): Tool<S> {
  return new Tool(opts);
}

/** {"error": message} as an error result. */
export function errorResult(message: string): ToolResult {
  return { content: JSON.stringify({ error: message }), isError: true };
}
