#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Reads an MCAP file the way Foxglove does (@mcap/core's McapIndexedReader, decompression from
// @mcap/support, as the MCAP TypeScript docs recommend) and prints its channels and schemas as one
// JSON object. Fails (exit 1) when a json channel is not what Foxglove can plot: a schema whose
// encoding is not "jsonschema" or whose data is not JSON, or a message that does not JSON.parse.
//
// Usage: CERULION_MCAP_JS_MODULES=/path/to/node_modules node scripts/check-mcap-js.mjs FILE
// The modules are looked up there, a node_modules folder or its parent (npm install --prefix DIR @mcap/core @mcap/support @mcap/nodejs),
// else next to this script. Exit 77 when they are not found, so a caller can say it skipped.
import { createRequire } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";

const kSkip = 77;
const file = process.argv[2];
if (!file) {
  console.error("usage: check-mcap-js.mjs FILE.mcap");
  process.exit(2);
}

const modules = process.env.CERULION_MCAP_JS_MODULES;
const require = createRequire(modules ? path.join(path.resolve(modules), "cerulion-check.js") : import.meta.url);
let core, support, nodejs;
try {
  core = require("@mcap/core");
  support = require("@mcap/support");
  nodejs = require("@mcap/nodejs");
} catch (e) {
  console.error(`skipped: @mcap/core, @mcap/support or @mcap/nodejs not found (${modules ? `in ${modules}` : "set CERULION_MCAP_JS_MODULES"}): ${e.message.split("\n")[0]}`);
  process.exit(kSkip);
}

// Read from disk: packages whose "exports" hide their package.json from require.
const version = (name) => {
  for (const dir of require.resolve.paths(name) ?? []) {
    const manifest = path.join(dir, name, "package.json");
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, "utf8")).version;
  }
  return "unknown";
};

const failures = [];
const handle = await open(file, "r");
const reader = await core.McapIndexedReader.Initialize({
  readable: new nodejs.FileHandleReadable(handle),
  decompressHandlers: await support.loadDecompressHandlers(),
});

const schemas = [...reader.schemasById.values()].map((s) => {
  const text = new TextDecoder().decode(s.data);
  let parsed;
  try {
    parsed = s.encoding === "jsonschema" ? JSON.parse(text) : undefined;
  } catch (e) {
    failures.push(`schema ${s.id} '${s.name}': its jsonschema data is not JSON (${e.message})`);
  }
  return {
    id: s.id,
    name: s.name,
    encoding: s.encoding,
    bytes: s.data.length,
    // Foxglove wants a JSON Schema of an object to list a json channel's fields.
    object: parsed === undefined ? undefined : parsed?.type === "object",
  };
});

const channels = new Map();
for (const ch of reader.channelsById.values()) {
  const schema = reader.schemasById.get(ch.schemaId);
  if (ch.messageEncoding === "json" && schema && schema.encoding !== "jsonschema") {
    failures.push(`channel '${ch.topic}': json messages with a '${schema.encoding}' schema (Foxglove needs jsonschema)`);
  }
  channels.set(ch.id, {
    id: ch.id,
    topic: ch.topic,
    message_encoding: ch.messageEncoding,
    schema_id: ch.schemaId,
    schema: schema ? schema.name : null,
    schema_encoding: schema ? schema.encoding : null,
    messages: 0,
    json_objects: ch.messageEncoding === "json" ? 0 : undefined,
  });
}

for await (const m of reader.readMessages({ validateCrcs: true })) {
  const ch = channels.get(m.channelId);
  ch.messages++;
  if (ch.message_encoding !== "json") continue;
  try {
    const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(m.data));
    if (value !== null && typeof value === "object" && !Array.isArray(value)) ch.json_objects++;
  } catch (e) {
    if (failures.length < 20) failures.push(`channel '${ch.topic}': message ${m.sequence} is not JSON (${e.message})`);
  }
}
await handle.close();

console.log(JSON.stringify({
  file,
  reader: { "@mcap/core": version("@mcap/core"), "@mcap/support": version("@mcap/support"),
            "@mcap/nodejs": version("@mcap/nodejs"), "@foxglove/wasm-zstd": version("@foxglove/wasm-zstd") },
  profile: reader.header.profile,
  library: reader.header.library,
  message_count: Number(reader.statistics?.messageCount ?? -1),
  schemas,
  channels: [...channels.values()],
  failures,
}, null, 2));
process.exit(failures.length ? 1 : 0);
