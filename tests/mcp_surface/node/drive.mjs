// Drives a dsh-jupyter MCP server with the official TypeScript SDK client, as Claude Code, Cursor,
// VS Code, the Inspector and mcp-remote do, and prints what came back as one JSON document.
//
//   node drive.mjs SPEC.json
//
// SPEC: {"transport": "http", "url": ..., "headers": {...}}
//    or {"transport": "stdio", "command": ..., "args": [...], "env": {...}}
//   plus "calls": [{"name": ..., "arguments": {...}}, ...]
//   and "steps", run after the calls, each answered in "steps" of the output in order:
//     {"op": "call", "name": ..., "arguments": {...}, "progress": true}  -> {ok, result, progress: [...]}
//     {"op": "listResources"} / {"op": "listTemplates"}                  -> {ok, result}
//     {"op": "readResource", "uri": ...}                                  -> {ok, result} | {ok: false, error, code}
//     {"op": "readLink", "step": I, "query": "?offset=2"}: reads the resource_link of step I's result
//     {"op": "wait", "ms": N}
// Output: {"tools": [...], "strict": {"<tool> input|output": "ok" | "<ajv error>"},
//          "calls": [{"ok": true, "result": {...}} | {"ok": false, "error": "<message>"}],
//          "steps": [...], "events": ["progress <token>" | "result <step>" | "error <message>", ...]}
// A call that the SDK turns into an exception (e.g. a structuredContent that fails the tool's
// outputSchema) is {"ok": false}: exactly what the tests must never see.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));

function transportFor(spec) {
  if (spec.transport === "http") {
    return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers || {} } });
  }
  return new StdioClientTransport({
    command: spec.command, args: spec.args || [], env: { ...process.env, ...(spec.env || {}) }, stderr: "ignore",
  });
}

// ajv in strict mode refuses unknown keywords, union type lists and required names that are not
// properties; both the draft-07 default (what the SDK uses) and draft 2020-12.
function strictCheck(tools) {
  const out = {};
  for (const tool of tools) {
    for (const [kind, schema] of [["input", tool.inputSchema], ["output", tool.outputSchema]]) {
      const problems = [];
      for (const make of [() => new Ajv({ strict: true, allErrors: true }),
                          () => new Ajv2020({ strict: true, allErrors: true })]) {
        try {
          make().compile(schema);
        } catch (error) {
          problems.push(String(error.message || error));
        }
      }
      out[`${tool.name} ${kind}`] = problems.length ? problems.join("; ") : "ok";
    }
  }
  return out;
}

const client = new Client({ name: "dsh-jupyter-tests", version: "1.0.0" });
const report = { calls: [], steps: [], events: [] };
// A progress notification that comes after its call's answer finds no handler: the SDK reports it here.
client.onerror = (error) => report.events.push(`error ${String(error.message || error)}`);

async function step(spec, index) {
  try {
    if (spec.op === "call") {
      const progress = [];
      const options = spec.progress
        ? { onprogress: (p) => { progress.push(p); report.events.push(`progress ${index}`); } }
        : undefined;
      const result = await client.callTool({ name: spec.name, arguments: spec.arguments }, undefined, options);
      report.events.push(`result ${index}`);
      return { ok: true, result, progress };
    }
    if (spec.op === "listResources") return { ok: true, result: await client.listResources() };
    if (spec.op === "listTemplates") return { ok: true, result: await client.listResourceTemplates() };
    if (spec.op === "readResource") return { ok: true, result: await client.readResource({ uri: spec.uri }) };
    if (spec.op === "readLink") {
      const link = report.steps[spec.step].result.content.find((c) => c.type === "resource_link");
      const uri = link.uri + (spec.query || "");
      return { ok: true, uri, result: await client.readResource({ uri }) };
    }
    if (spec.op === "wait") {
      await new Promise((resolve) => setTimeout(resolve, spec.ms));
      return { ok: true };
    }
    return { ok: false, error: `unknown op ${spec.op}` };
  } catch (error) {
    return { ok: false, error: String(error.message || error), code: error.code, data: error.data };
  }
}
try {
  await client.connect(transportFor(spec));
  const { tools } = await client.listTools();  // also primes the client's output validators
  report.tools = tools;
  report.strict = strictCheck(tools);
  for (const call of spec.calls || []) {
    try {
      const result = await client.callTool({ name: call.name, arguments: call.arguments });
      report.calls.push({ ok: true, result });
    } catch (error) {
      report.calls.push({ ok: false, error: String(error.message || error) });
    }
  }
  for (const [index, spec_] of (spec.steps || []).entries()) {
    report.steps.push(await step(spec_, index));
  }
} catch (error) {
  report.connectError = String(error.message || error);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report));
