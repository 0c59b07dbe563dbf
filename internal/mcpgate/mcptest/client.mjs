// Drives hookhost's MCP gateway with the official TypeScript SDK's client
// over stdio. argv[2] is a JSON object: the gateway's command and args,
// and the calls to make ([{name, arguments}]). Prints one JSON object: the
// negotiated protocol version, the tools listed and each call's result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const plan = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "inherit" });
let protocol = "";
// The client tells its transport the version it negotiated.
transport.setProtocolVersion = (v) => { protocol = v; };
const client = new Client({ name: "hookhost-mcptest", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const results = [];
for (const call of plan.calls) {
  results.push(await client.callTool(call));
}
console.log(JSON.stringify({ protocol, tools, results }));
await client.close();
