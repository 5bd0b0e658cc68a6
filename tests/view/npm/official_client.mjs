// SPDX-License-Identifier: Apache-2.0
// Speaks to a running `cerulion view` with the official client (@foxglove/ws-protocol over the
// `ws` package), and prints what it saw as one JSON object.
//   node official_client.mjs URL DIR
// It subscribes to /json and /big (names under the test's prefix, from DIR/topics.json) once
// every expected topic is advertised, writes DIR/subscribed once a warm-up message of each came
// through; it writes DIR/later-advertised
// when the topic "later" is advertised, and ends when it has 1,000 json messages, 10 big ones,
// and "later" unadvertised (or after 90 s).
import { writeFileSync, readFileSync } from "node:fs";
import foxglove from "@foxglove/ws-protocol";
import WebSocket from "ws";

const { FoxgloveClient } = foxglove;  // a CommonJS package: its exports come as the default

const [url, dir] = process.argv.slice(2);
const topics = JSON.parse(readFileSync(`${dir}/topics.json`, "utf8"));
const result = {
  serverInfo: null, channels: {}, json_count: 0, json_in_order: true, big_count: 0, big_exact: true,
  later_advertised: false, later_unadvertised: false, statuses: [],
};
const byId = new Map();
let subscribed = false;
let jsonSub = -1, bigSub = -1, nextJson = 0;
// The test publishes warm-up messages (json i = -1, big first byte 255) until both have come
// through: then the server has both subscriptions, and it publishes the counted ones.
let warmJson = false, warmBig = false;
function warmed() {
  if (warmJson && warmBig) writeFileSync(`${dir}/subscribed`, "");
}

function finish(code) {
  process.stdout.write(JSON.stringify(result) + "\n");
  process.exit(code);
}
setTimeout(() => finish(3), 90000);
process.on("SIGTERM", () => finish(4));  // the test gave up: what was seen says why

function done() {
  return result.json_count >= 1000 && result.big_count >= 10 && result.later_unadvertised;
}

function connect(attempt) {
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  ws.on("error", () => {});
  const client = new FoxgloveClient({ ws });
  let opened = false;
  client.on("open", () => { opened = true; });
  client.on("close", () => {
    if (!opened && attempt < 150) setTimeout(() => connect(attempt + 1), 100);
  });
  client.on("serverInfo", (info) => { result.serverInfo = info; });
  client.on("status", (s) => { result.statuses.push(s); });
  client.on("advertise", (channels) => {
    for (const c of channels) {
      byId.set(c.id, c);
      result.channels[c.topic] = c;
      if (c.topic === topics.later) {
        result.later_advertised = true;
        writeFileSync(`${dir}/later-advertised`, "");
      }
    }
    const wanted = [topics.json, topics.pb, topics.cdr, topics.raw, topics.big];
    if (!subscribed && wanted.every((t) => result.channels[t])) {
      subscribed = true;
      jsonSub = client.subscribe(result.channels[topics.json].id);
      bigSub = client.subscribe(result.channels[topics.big].id);
    }
  });
  client.on("unadvertise", (ids) => {
    for (const id of ids) {
      const c = byId.get(id);
      if (c && c.topic === topics.later) result.later_unadvertised = true;
    }
    if (done()) finish(0);
  });
  const decoder = new TextDecoder();
  client.on("message", ({ subscriptionId, data }) => {
    if (subscriptionId === jsonSub) {
      const m = JSON.parse(decoder.decode(data));
      if (m.i < 0) { warmJson = true; warmed(); return; }
      if (m.i !== nextJson) result.json_in_order = false;
      nextJson = m.i + 1;
      result.json_count++;
    } else if (subscriptionId === bigSub) {
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      const k = bytes[0];
      if (k === 255) { warmBig = true; warmed(); return; }
      if (bytes.length !== 1 << 20) result.big_exact = false;
      for (let j = 1; j < bytes.length && result.big_exact; j++) {
        if (bytes[j] !== ((j * 31 + k) & 0xff)) result.big_exact = false;
      }
      result.big_count++;
    }
    if (done()) finish(0);
  });
}
connect(0);
