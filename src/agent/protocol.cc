#include "agent/protocol.h"

namespace adapt::agent {
namespace {

void PutU32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

uint32_t GetU32(const char* p) {
  auto b = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

void PutString(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

// Reads from a payload, remembering whether it ran past the end.
struct Reader {
  std::string_view in;
  bool bad = false;

  uint32_t U32() {
    if (in.size() < 4) {
      bad = true;
      return 0;
    }
    uint32_t v = GetU32(in.data());
    in.remove_prefix(4);
    return v;
  }
  std::string String() {
    uint32_t n = U32();
    if (bad || in.size() < n) {
      bad = true;
      return {};
    }
    std::string s(in.substr(0, n));
    in.remove_prefix(n);
    return s;
  }
  bool Strings(std::vector<std::string>& out) {
    uint32_t n = U32();
    // Every string takes at least its 4-byte length: a count beyond that is a lie.
    if (bad || n > in.size() / 4) return !(bad = true);
    for (uint32_t i = 0; i < n && !bad; ++i) out.push_back(String());
    return !bad;
  }
};

bool KnownType(uint8_t t) {
  return t >= static_cast<uint8_t>(FrameType::kHello) && t <= static_cast<uint8_t>(FrameType::kAck);
}

}  // namespace

std::string EncodeFrame(FrameType type, uint32_t channel, std::string_view payload) {
  std::string out;
  out.reserve(kFrameHeaderSize + payload.size());
  PutU32(out, static_cast<uint32_t>(payload.size()));
  out.push_back(static_cast<char>(type));
  PutU32(out, channel);
  out.append(payload);
  return out;
}

void FrameDecoder::Feed(std::string_view bytes) {
  // Drop what was consumed before growing, so the buffer holds at most one frame and a bit.
  if (offset_ > 0 && offset_ >= buffer_.size() / 2) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  buffer_.append(bytes);
}

FrameDecoder::Next FrameDecoder::Pop(Frame& out) {
  size_t avail = buffer_.size() - offset_;
  if (avail < kFrameHeaderSize) return Next::kNeedMore;
  const char* p = buffer_.data() + offset_;
  uint32_t len = GetU32(p);
  auto type = static_cast<uint8_t>(p[4]);
  if (len > kMaxFramePayload || !KnownType(type)) return Next::kBad;
  if (avail < kFrameHeaderSize + len) return Next::kNeedMore;
  out.type = static_cast<FrameType>(type);
  out.channel = GetU32(p + 5);
  out.payload.assign(p + kFrameHeaderSize, len);
  offset_ += kFrameHeaderSize + len;
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  return Next::kFrame;
}

std::string EncodeSpawn(const SpawnRequest& r) {
  std::string out;
  PutU32(out, r.uid);
  PutU32(out, r.gid);
  PutU32(out, r.has_stdin ? 1 : 0);
  PutString(out, r.cwd);
  PutU32(out, static_cast<uint32_t>(r.argv.size()));
  for (const auto& a : r.argv) PutString(out, a);
  PutU32(out, static_cast<uint32_t>(r.env.size()));
  for (const auto& e : r.env) PutString(out, e);
  PutString(out, r.data_token);
  PutString(out, r.tag);
  return out;
}

bool DecodeSpawn(std::string_view payload, SpawnRequest& out) {
  Reader r{payload};
  out = SpawnRequest();
  out.uid = r.U32();
  out.gid = r.U32();
  out.has_stdin = r.U32() != 0;
  out.cwd = r.String();
  if (!r.Strings(out.argv) || !r.Strings(out.env)) return false;
  out.data_token = r.String();
  out.tag = r.String();
  return !r.bad && r.in.empty() && !out.argv.empty();
}

std::string EncodeHello(std::string_view key, const std::vector<HeldProcess>& held) {
  std::string out;
  PutU32(out, kProtocolVersion);
  PutString(out, key);
  PutU32(out, static_cast<uint32_t>(held.size()));
  for (const auto& h : held) {
    PutU32(out, h.channel);
    PutString(out, h.tag);
  }
  return out;
}

bool DecodeHello(std::string_view payload, uint32_t& version, std::string& key,
                 std::vector<HeldProcess>& held) {
  Reader r{payload};
  held.clear();
  key.clear();
  version = r.U32();
  // Older agents sent no key: their hello is the version and the held processes.
  if (!SpokenVersion(version)) return !r.bad;
  key = r.String();
  if (key.size() > kMaxAgentKey) return false;
  uint32_t n = r.U32();
  // Every entry takes at least 8 bytes: a count beyond that is a lie.
  if (r.bad || n > r.in.size() / 8) return false;
  for (uint32_t i = 0; i < n && !r.bad; ++i) {
    HeldProcess h;
    h.channel = r.U32();
    h.tag = r.String();
    held.push_back(std::move(h));
  }
  return !r.bad && r.in.empty();
}

std::string EncodeAck(const Ack& ack) {
  std::string out;
  for (uint64_t v : {ack.stdout_bytes, ack.stderr_bytes}) {
    PutU32(out, static_cast<uint32_t>(v >> 32));
    PutU32(out, static_cast<uint32_t>(v));
  }
  PutU32(out, ack.ended ? 1 : 0);
  return out;
}

bool DecodeAck(std::string_view payload, Ack& out) {
  if (payload.size() != 20) return false;
  auto u64 = [&](size_t at) {
    return uint64_t{GetU32(payload.data() + at)} << 32 | GetU32(payload.data() + at + 4);
  };
  uint32_t ended = GetU32(payload.data() + 16);
  if (ended > 1) return false;
  out = Ack{u64(0), u64(8), ended == 1};
  return true;
}

std::string EncodeInts(const std::vector<int32_t>& values) {
  std::string out;
  for (int32_t v : values) PutU32(out, static_cast<uint32_t>(v));
  return out;
}

bool DecodeInts(std::string_view payload, size_t count, std::vector<int32_t>& out) {
  if (payload.size() != 4 * count) return false;
  out.clear();
  for (size_t i = 0; i < count; ++i)
    out.push_back(static_cast<int32_t>(GetU32(payload.data() + 4 * i)));
  return true;
}

}  // namespace adapt::agent
