// Reads MCAP files with @mcap/core's McapIndexedReader (summary, chunk indexes, message indexes,
// CRCs) and McapStreamReader, and prints one JSON object per file, one a line: counts, metadata,
// attachments and one entry per message; {"file", "error"} for a file it could not read (then it
// exits 1, after the others).
// Usage: node read_indexed.mjs FILE...
import { open, readFile } from "node:fs/promises";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { decompress } from "fzstd";

function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const decompressHandlers = {
  zstd: (data, decompressedSize) => decompress(data, new Uint8Array(Number(decompressedSize))),
};

async function read(file) {
  const handle = await open(file, "r");
  try {
    const size = (await handle.stat()).size;
    const readable = {
      size: async () => BigInt(size),
      read: async (offset, length) => {
        const buf = new Uint8Array(Number(length));
        await handle.read(buf, 0, Number(length), Number(offset));
        return buf;
      },
    };
    const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers });
    const messages = [];
    for await (const m of reader.readMessages({ validateCrcs: true })) {
      const channel = reader.channelsById.get(m.channelId);
      messages.push([channel.topic, m.sequence, m.logTime.toString(), m.data.length, fnv1a(m.data)]);
    }
    const metadata = [];
    for await (const md of reader.readMetadata()) metadata.push({ name: md.name, metadata: Object.fromEntries(md.metadata) });
    const attachments = [];
    for await (const a of reader.readAttachments()) attachments.push({ name: a.name, size: a.data.length });
    // The streaming reader checks the structure end to end: magic, DataEnd, CRCs, footer.
    const stream = new McapStreamReader({ decompressHandlers, validateCrcs: true });
    stream.append(new Uint8Array(await readFile(file)));
    let streamedMessages = 0;
    for (let rec; (rec = stream.nextRecord()); ) if (rec.type === "Message") streamedMessages++;
    return {
      file,
      stream_done: stream.done(),
      streamed_messages: streamedMessages,
      message_count: Number(reader.statistics?.messageCount ?? -1),
      chunk_count: reader.chunkIndexes.length,
      messages,
      metadata,
      attachments,
    };
  } finally {
    await handle.close();
  }
}

let failed = false;
for (const file of process.argv.slice(2)) {
  try {
    console.log(JSON.stringify(await read(file)));
  } catch (e) {
    failed = true;
    console.log(JSON.stringify({ file, error: String(e?.message ?? e) }));
  }
}
process.exitCode = failed ? 1 : 0;
