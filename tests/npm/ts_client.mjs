// A real MCP client from the TypeScript SDK: start a stdio server, list its tools, call some.
// Usage: node ts_client.mjs CALLS_JSON COMMAND [ARGS...]
// CALLS_JSON is a JSON list of [toolName, arguments]; prints one JSON object on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [calls, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "ignore" });
const client = new Client({ name: "workspace-tools-ts-test", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const [name, input] of JSON.parse(calls)) {
  results.push({ name, result: await client.callTool({ name, arguments: input }) });
}
await client.close();
console.log(JSON.stringify({ server: client.getServerVersion(), tools, results }));
