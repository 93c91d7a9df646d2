#!/usr/bin/env node
// A small MCP server for rein's tests of hard edges, on the reference SDK: `starts`
// says how often this server was started in this directory (a counter file), `crash`
// ends the process in the middle of a call, `nap` sleeps for `seconds` (cancellation).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { readFileSync, writeFileSync } from "node:fs";

const counter = process.env.CRASHY_COUNTER || "crashy-starts.txt";
let starts = 0;
try { starts = Number(readFileSync(counter, "utf8")) || 0; } catch {}
starts += 1;
writeFileSync(counter, String(starts));
console.error(`crashy: start ${starts}`);

const server = new McpServer({ name: "crashy", version: "1.0.0" });
server.registerTool("starts", { description: "How often this server was started", inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: "text", text: `started ${starts} times` }] }));
server.registerTool("crash", { description: "Ends the server in the middle of the call", inputSchema: {} },
  async () => { console.error("crashy: crashing now"); process.exit(7); });
server.registerTool("nap", { description: "Sleeps", inputSchema: { seconds: z.number() } },
  async ({ seconds }, extra) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, seconds * 1000);
      extra.signal.addEventListener("abort", () => { console.error("crashy: nap cancelled"); clearTimeout(timer); resolve(); });
    });
    return { content: [{ type: "text", text: `slept` }] };
  });
await server.connect(new StdioServerTransport());
