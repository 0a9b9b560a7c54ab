// A deployed app's release as stored: a tar compressed with zstd (releases stored before
// they were compressed are plain tars, and still read). Shared by adaptd, which packs and
// checks releases, and the static agent, which unpacks one inside a replica.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace adapt::agent {

// Fills up to n bytes; 0 at the end, -1 on error.
using ByteSource = std::function<long(char*, size_t)>;

// Reads as the zstd compression of the tar `tar` gives. Past `max_unpacked` bytes of tar,
// Read fails (-1) and error() says so; so does a failing source.
class ReleaseCompressor {
 public:
  ReleaseCompressor(ByteSource tar, uint64_t max_unpacked, int level = 3);
  ~ReleaseCompressor();
  ReleaseCompressor(const ReleaseCompressor&) = delete;
  ReleaseCompressor& operator=(const ReleaseCompressor&) = delete;
  long Read(char* buf, size_t n);
  const std::string& error() const { return error_; }
  uint64_t unpacked() const { return unpacked_; }

 private:
  long Fail(std::string why);

  ByteSource tar_;
  uint64_t max_unpacked_;
  void* cctx_;
  std::vector<char> in_;
  size_t in_pos_ = 0, in_size_ = 0;
  bool eof_ = false, done_ = false;
  uint64_t unpacked_ = 0;
  std::string error_;
};

// Reads a stored release `stored` as the tar it holds: zstd-decompressed when it starts
// with zstd's magic number, as it is otherwise (an older, uncompressed release). Fails (-1,
// error()) past `max_unpacked` bytes of tar (a decompression bomb), on a corrupt or
// truncated frame, or when the source fails.
class ReleaseUnpacker {
 public:
  ReleaseUnpacker(ByteSource stored, uint64_t max_unpacked);
  ~ReleaseUnpacker();
  ReleaseUnpacker(const ReleaseUnpacker&) = delete;
  ReleaseUnpacker& operator=(const ReleaseUnpacker&) = delete;
  long Read(char* buf, size_t n);
  const std::string& error() const { return error_; }
  bool compressed() const { return dctx_ != nullptr; }

 private:
  long Fail(std::string why);
  bool Refill();

  ByteSource stored_;
  uint64_t max_unpacked_;
  void* dctx_ = nullptr;
  bool started_ = false;
  std::vector<char> in_;
  size_t in_pos_ = 0, in_size_ = 0;
  bool eof_ = false;
  size_t pending_ = 1;  // zstd's hint: 0 once a frame ended and was flushed
  uint64_t unpacked_ = 0;
  std::string error_;
};

}  // namespace adapt::agent
