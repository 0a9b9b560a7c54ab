#include "runtime/output_ring.h"

#include <cstdint>

namespace adapt::runtime {
namespace {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t GetU32(std::string_view s, size_t pos) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(s[pos + i])) << (8 * i);
  return v;
}

}  // namespace

void OutputRing::Append(Stream stream, std::string_view data) {
  if (data.empty()) return;
  if (data.size() > kMaxBytes) {
    data = data.substr(data.size() - kMaxBytes);
    truncated_ = true;
  }
  chunks_.push_back({stream, std::string(data)});
  bytes_ += data.size();
  while (chunks_.size() > kMaxChunks) {
    bytes_ -= chunks_.front().data.size();
    chunks_.pop_front();
    truncated_ = true;
  }
  while (bytes_ > kMaxBytes) {
    Chunk& front = chunks_.front();
    size_t excess = bytes_ - kMaxBytes;
    truncated_ = true;
    if (front.data.size() <= excess) {
      bytes_ -= front.data.size();
      chunks_.pop_front();
    } else {
      front.data.erase(0, excess);
      bytes_ -= excess;
    }
  }
}

std::string OutputRing::Text(Stream stream) const {
  std::string out;
  for (const auto& c : chunks_) {
    if (c.stream == stream) out += c.data;
  }
  return out;
}

std::string OutputRing::Serialize() const {
  std::string out = "ADO1";
  out += truncated_ ? '\1' : '\0';
  for (const auto& c : chunks_) {
    out += static_cast<char>(c.stream);
    PutU32(out, static_cast<uint32_t>(c.data.size()));
    out += c.data;
  }
  return out;
}

Result<OutputRing> OutputRing::Parse(std::string_view data) {
  if (data.size() < 5 || data.substr(0, 4) != "ADO1") return Internal("output file has no header");
  OutputRing ring;
  bool truncated = data[4] != 0;
  size_t pos = 5;
  while (pos < data.size()) {
    if (pos + 5 > data.size()) return Internal("output file is cut short");
    auto stream = static_cast<Stream>(data[pos]);
    uint32_t len = GetU32(data, pos + 1);
    pos += 5;
    if (pos + len > data.size()) return Internal("output file is cut short");
    if (stream != Stream::kStdout && stream != Stream::kStderr) return Internal("bad stream tag");
    ring.Append(stream, data.substr(pos, len));
    pos += len;
  }
  ring.truncated_ = ring.truncated_ || truncated;
  return ring;
}

}  // namespace adapt::runtime
