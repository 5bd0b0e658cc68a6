// SPDX-License-Identifier: Apache-2.0
#include "records.hpp"

#include <type_traits>

#include "cerulion/recorder/message_record.hpp"
#include "wire.hpp"

namespace cerulion::recorder {

const char* to_string(Opcode op) noexcept {
  switch (op) {
    case Opcode::Header: return "Header";
    case Opcode::Footer: return "Footer";
    case Opcode::Schema: return "Schema";
    case Opcode::Channel: return "Channel";
    case Opcode::Message: return "Message";
    case Opcode::Chunk: return "Chunk";
    case Opcode::MessageIndex: return "MessageIndex";
    case Opcode::ChunkIndex: return "ChunkIndex";
    case Opcode::Attachment: return "Attachment";
    case Opcode::AttachmentIndex: return "AttachmentIndex";
    case Opcode::Statistics: return "Statistics";
    case Opcode::Metadata: return "Metadata";
    case Opcode::MetadataIndex: return "MetadataIndex";
    case Opcode::SummaryOffset: return "SummaryOffset";
    case Opcode::DataEnd: return "DataEnd";
  }
  return "Unknown";
}

namespace detail {
namespace {

void encode_map(Encoder& e, const KeyValueMap& m) {
  auto at = e.begin_u32();
  for (const auto& [k, v] : m) {
    e.str(k);
    e.str(v);
  }
  e.finish_u32(at);
}

bool decode_map(Decoder& d, KeyValueMap& m) {
  auto body = d.span(d.u32());
  Decoder inner(body);
  while (!d.failed() && inner.remaining() > 0) {
    std::string k = inner.str();
    std::string v = inner.str();
    if (inner.failed()) return false;
    m[std::move(k)] = std::move(v);
  }
  return !d.failed();
}

template <typename V>
bool decode_id_map(Decoder& d, std::map<std::uint16_t, V>& m) {
  auto body = d.span(d.u32());
  Decoder inner(body);
  while (!d.failed() && inner.remaining() > 0) {
    std::uint16_t k = inner.u16();
    std::uint64_t v = inner.u64();
    if (inner.failed()) return false;
    m[k] = v;
  }
  return !d.failed();
}

void encode_attachment_fields(Encoder& e, const Attachment& a) {
  e.u64(a.log_time);
  e.u64(a.create_time);
  e.str(a.name);
  e.str(a.media_type);
  e.bytes64(a.data);
}

void encode_content(Encoder& e, const Record& r) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Header>) {
          e.str(x.profile);
          e.str(x.library);
        } else if constexpr (std::is_same_v<T, Footer>) {
          e.u64(x.summary_start);
          e.u64(x.summary_offset_start);
          e.u32(x.summary_crc);
        } else if constexpr (std::is_same_v<T, Schema>) {
          e.u16(x.id);
          e.str(x.name);
          e.str(x.encoding);
          e.bytes32(x.data);
        } else if constexpr (std::is_same_v<T, Channel>) {
          e.u16(x.id);
          e.u16(x.schema_id);
          e.str(x.topic);
          e.str(x.message_encoding);
          encode_map(e, x.metadata);
        } else if constexpr (std::is_same_v<T, Message>) {
          // Not reached: append_record writes a Message whole, through append_message_record.
        } else if constexpr (std::is_same_v<T, MessageIndex>) {
          e.u16(x.channel_id);
          e.u32(static_cast<std::uint32_t>(x.records.size() * 16));
          for (const auto& [t, off] : x.records) {
            e.u64(t);
            e.u64(off);
          }
        } else if constexpr (std::is_same_v<T, ChunkIndex>) {
          e.u64(x.message_start_time);
          e.u64(x.message_end_time);
          e.u64(x.chunk_start_offset);
          e.u64(x.chunk_length);
          e.u32(static_cast<std::uint32_t>(x.message_index_offsets.size() * 10));
          for (const auto& [id, off] : x.message_index_offsets) {
            e.u16(id);
            e.u64(off);
          }
          e.u64(x.message_index_length);
          e.str(x.compression);
          e.u64(x.compressed_size);
          e.u64(x.uncompressed_size);
        } else if constexpr (std::is_same_v<T, Attachment>) {
          encode_attachment_fields(e, x);
          e.u32(x.crc);
        } else if constexpr (std::is_same_v<T, AttachmentIndex>) {
          e.u64(x.offset);
          e.u64(x.length);
          e.u64(x.log_time);
          e.u64(x.create_time);
          e.u64(x.data_size);
          e.str(x.name);
          e.str(x.media_type);
        } else if constexpr (std::is_same_v<T, Statistics>) {
          e.u64(x.message_count);
          e.u16(x.schema_count);
          e.u32(x.channel_count);
          e.u32(x.attachment_count);
          e.u32(x.metadata_count);
          e.u32(x.chunk_count);
          e.u64(x.message_start_time);
          e.u64(x.message_end_time);
          e.u32(static_cast<std::uint32_t>(x.channel_message_counts.size() * 10));
          for (const auto& [id, n] : x.channel_message_counts) {
            e.u16(id);
            e.u64(n);
          }
        } else if constexpr (std::is_same_v<T, Metadata>) {
          e.str(x.name);
          encode_map(e, x.metadata);
        } else if constexpr (std::is_same_v<T, MetadataIndex>) {
          e.u64(x.offset);
          e.u64(x.length);
          e.str(x.name);
        } else if constexpr (std::is_same_v<T, SummaryOffset>) {
          e.u8(x.group_opcode);
          e.u64(x.group_start);
          e.u64(x.group_length);
        } else if constexpr (std::is_same_v<T, DataEnd>) {
          e.u32(x.data_section_crc);
        } else if constexpr (std::is_same_v<T, UnknownRecord>) {
          e.raw(x.content.data(), x.content.size());
        } else if constexpr (std::is_same_v<T, ChunkInfo>) {
          // Chunks go through append_chunk: their records are not part of ChunkInfo.
        }
      },
      r);
}

std::uint8_t opcode_of(const Record& r) {
  static constexpr std::uint8_t ops[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                         0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F};
  if (auto* u = std::get_if<UnknownRecord>(&r)) return u->opcode;
  return ops[r.index()];
}

}  // namespace

void append_prefix(ByteVector& out, Opcode op, std::uint64_t length) {
  Encoder e(out);
  e.u8(static_cast<std::uint8_t>(op));
  e.u64(length);
}

void append_record(ByteVector& out, const Record& record) {
  if (const auto* m = std::get_if<Message>(&record)) {
    return append_message_record(out, {m->channel_id, m->sequence, m->log_time, m->publish_time}, m->data);
  }
  Encoder e(out);
  e.u8(opcode_of(record));
  auto at = e.begin_u64();
  encode_content(e, record);
  e.finish_u64(at);
}

void append_chunk(ByteVector& out, const ChunkInfo& c, std::span<const std::byte> stored) {
  Encoder e(out);
  e.u8(static_cast<std::uint8_t>(Opcode::Chunk));
  auto at = e.begin_u64();
  e.u64(c.message_start_time);
  e.u64(c.message_end_time);
  e.u64(c.uncompressed_size);
  e.u32(c.uncompressed_crc);
  e.str(c.compression);
  e.bytes64(stored);
  e.finish_u64(at);
}

std::uint32_t attachment_crc(const Attachment& a) {
  ByteVector buf;
  Encoder e(buf);
  encode_attachment_fields(e, a);
  return crc32_of(buf);
}

std::optional<Record> decode_record(std::uint8_t opcode, std::span<const std::byte> content,
                                    std::string& error, std::span<const std::byte>* chunk_records) {
  Decoder d(content);
  auto fail = [&](const char* what) -> std::optional<Record> {
    error = std::string("malformed ") + what + " record";
    return std::nullopt;
  };
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::Header: {
      Header h;
      h.profile = d.str();
      h.library = d.str();
      if (d.failed()) return fail("Header");
      return h;
    }
    case Opcode::Footer: {
      Footer f;
      f.summary_start = d.u64();
      f.summary_offset_start = d.u64();
      f.summary_crc = d.u32();
      if (d.failed()) return fail("Footer");
      return f;
    }
    case Opcode::Schema: {
      Schema s;
      s.id = d.u16();
      s.name = d.str();
      s.encoding = d.str();
      s.data = d.bytes32();
      if (d.failed()) return fail("Schema");
      return s;
    }
    case Opcode::Channel: {
      Channel c;
      c.id = d.u16();
      c.schema_id = d.u16();
      c.topic = d.str();
      c.message_encoding = d.str();
      if (d.failed() || !decode_map(d, c.metadata)) return fail("Channel");
      return c;
    }
    case Opcode::Message: {
      auto fields = decode_message_fields(content);
      if (!fields) return fail("Message");
      Message m{fields->channel_id, fields->sequence, fields->log_time, fields->publish_time, {}};
      auto data = content.subspan(kMessageFieldsSize);
      m.data.assign(data.begin(), data.end());
      return m;
    }
    case Opcode::Chunk: {
      ChunkInfo c;
      c.message_start_time = d.u64();
      c.message_end_time = d.u64();
      c.uncompressed_size = d.u64();
      c.uncompressed_crc = d.u32();
      c.compression = d.str();
      auto stored = d.span(d.u64());
      if (d.failed()) return fail("Chunk");
      c.compressed_size = stored.size();
      if (chunk_records) *chunk_records = stored;
      return c;
    }
    case Opcode::MessageIndex: {
      MessageIndex m;
      m.channel_id = d.u16();
      auto body = d.span(d.u32());
      if (d.failed() || body.size() % 16 != 0) return fail("MessageIndex");
      Decoder inner(body);
      m.records.reserve(body.size() / 16);
      while (inner.remaining() >= 16) {
        std::uint64_t t = inner.u64();
        std::uint64_t off = inner.u64();
        m.records.emplace_back(t, off);
      }
      return m;
    }
    case Opcode::ChunkIndex: {
      ChunkIndex c;
      c.message_start_time = d.u64();
      c.message_end_time = d.u64();
      c.chunk_start_offset = d.u64();
      c.chunk_length = d.u64();
      if (!decode_id_map(d, c.message_index_offsets)) return fail("ChunkIndex");
      c.message_index_length = d.u64();
      c.compression = d.str();
      c.compressed_size = d.u64();
      c.uncompressed_size = d.u64();
      if (d.failed()) return fail("ChunkIndex");
      return c;
    }
    case Opcode::Attachment: {
      Attachment a;
      a.log_time = d.u64();
      a.create_time = d.u64();
      a.name = d.str();
      a.media_type = d.str();
      a.data = d.bytes64();
      a.crc = d.u32();
      if (d.failed()) return fail("Attachment");
      return a;
    }
    case Opcode::AttachmentIndex: {
      AttachmentIndex a;
      a.offset = d.u64();
      a.length = d.u64();
      a.log_time = d.u64();
      a.create_time = d.u64();
      a.data_size = d.u64();
      a.name = d.str();
      a.media_type = d.str();
      if (d.failed()) return fail("AttachmentIndex");
      return a;
    }
    case Opcode::Statistics: {
      Statistics s;
      s.message_count = d.u64();
      s.schema_count = d.u16();
      s.channel_count = d.u32();
      s.attachment_count = d.u32();
      s.metadata_count = d.u32();
      s.chunk_count = d.u32();
      s.message_start_time = d.u64();
      s.message_end_time = d.u64();
      if (d.failed() || !decode_id_map(d, s.channel_message_counts)) return fail("Statistics");
      return s;
    }
    case Opcode::Metadata: {
      Metadata m;
      m.name = d.str();
      if (d.failed() || !decode_map(d, m.metadata)) return fail("Metadata");
      return m;
    }
    case Opcode::MetadataIndex: {
      MetadataIndex m;
      m.offset = d.u64();
      m.length = d.u64();
      m.name = d.str();
      if (d.failed()) return fail("MetadataIndex");
      return m;
    }
    case Opcode::SummaryOffset: {
      SummaryOffset s;
      s.group_opcode = d.u8();
      s.group_start = d.u64();
      s.group_length = d.u64();
      if (d.failed()) return fail("SummaryOffset");
      return s;
    }
    case Opcode::DataEnd: {
      DataEnd e;
      e.data_section_crc = d.u32();
      if (d.failed()) return fail("DataEnd");
      return e;
    }
  }
  UnknownRecord u;
  u.opcode = opcode;
  u.content.assign(content.begin(), content.end());
  return u;
}

}  // namespace detail
}  // namespace cerulion::recorder
