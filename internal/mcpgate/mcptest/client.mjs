// Drives hookhost's MCP gateway with the official TypeScript SDK's client.
// argv[2] is a JSON object: either the gateway's command and args (stdio),
// or the url of its Streamable HTTP endpoint and the headers to send
// (such as the inbound key), and the calls to make ([{name, arguments}]).
// Prints one JSON object: the negotiated protocol version, the tools
// listed and each call's result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(process.argv[2]);
const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } })
  : new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "inherit" });
let protocol = "";
// The client tells its transport the version it negotiated.
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => {
  protocol = v;
  // The HTTP transport sends it back on every request.
  setProtocolVersion?.(v);
};
const client = new Client({ name: "hookhost-mcptest", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const results = [];
for (const call of plan.calls) {
  results.push(await client.callTool(call));
}
console.log(JSON.stringify({ protocol, tools, results }));
if (plan.url) {
  // Ends the session on the server (DELETE), as a client should.
  await transport.terminateSession();
}
await client.close();
