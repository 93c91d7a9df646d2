#!/usr/bin/env node
// An MCP server made from an API description, for rein's generated tasks (crates/eval
// src/generate): `node generated.mjs API.json`. The file holds
//   {"name": "...", "tools": [{"name", "description", "parameters": {"properties":
//     {ARG: {"type": "string"|"integer"|"number"|"boolean"|"array", "enum"?, "items"?,
//     "description"?}}, "required": [ARG…]}, "cases": [{"when": {…}, "result": "…"}],
//     "result": "…", "read_only"?: true}]}
// A call answers with the first case whose `when` its arguments contain (objects by
// key, arrays whole, numbers by value, the rest equal: the graders' subset), else with
// the tool's `result`.
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const file = process.argv[2];
if (!file) {
  console.error("usage: generated.mjs API.json");
  process.exit(2);
}
const api = JSON.parse(readFileSync(file, "utf8"));

function zodOf(spec) {
  let type;
  if (Array.isArray(spec.enum) && spec.enum.length > 0 && spec.enum.every((v) => typeof v === "string")) {
    type = z.enum(spec.enum);
  } else if (spec.type === "string") {
    type = z.string();
  } else if (spec.type === "integer") {
    // Without the safe-integer bounds zod would write into the JSON schema.
    type = z.number().int().meta({ minimum: undefined, maximum: undefined });
  } else if (spec.type === "number") {
    type = z.number();
  } else if (spec.type === "boolean") {
    type = z.boolean();
  } else if (spec.type === "array") {
    type = z.array(spec.items ? zodOf(spec.items) : z.string());
  } else {
    type = z.any();
  }
  return spec.description ? type.meta({ ...type.meta(), description: spec.description }) : type;
}

function shapeOf(parameters) {
  const properties = (parameters && parameters.properties) || {};
  const required = new Set((parameters && parameters.required) || []);
  const shape = {};
  for (const [key, spec] of Object.entries(properties)) {
    const type = zodOf(spec || {});
    shape[key] = required.has(key) ? type : type.optional();
  }
  return shape;
}

function subset(want, have) {
  if (want !== null && typeof want === "object" && !Array.isArray(want)) {
    return have !== null && typeof have === "object" && !Array.isArray(have)
      && Object.entries(want).every(([key, value]) => key in have && subset(value, have[key]));
  }
  if (Array.isArray(want)) {
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => subset(w, have[i]));
  }
  return want === have;
}

const server = new McpServer({ name: api.name || "api", version: "1.0.0" });
for (const tool of api.tools || []) {
  server.registerTool(tool.name, {
    description: tool.description || "",
    inputSchema: shapeOf(tool.parameters),
    annotations: { readOnlyHint: tool.read_only === true },
  }, async (args) => {
    const found = (tool.cases || []).find((c) => subset(c.when || {}, args || {}));
    const text = found ? found.result : (tool.result ?? "ok");
    return { content: [{ type: "text", text: String(text) }] };
  });
}
await server.connect(new StdioServerTransport());
