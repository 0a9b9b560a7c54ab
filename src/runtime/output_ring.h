// OutputRing keeps the latest output of a process: at most 256 KiB and 1024 chunks,
// stdout and stderr combined (seed 001: "Output retains the latest 256 KiB or 1024
// chunks combined"). Older bytes are dropped and `truncated` records that they were.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

#include "base/status.h"

namespace adapt::runtime {

enum class Stream { kStdout = 1, kStderr = 2 };

class OutputRing {
 public:
  static constexpr size_t kMaxBytes = 256 * 1024;
  static constexpr size_t kMaxChunks = 1024;

  void Append(Stream stream, std::string_view data);
  // The retained bytes of one stream, in order.
  std::string Text(Stream stream) const;
  bool truncated() const { return truncated_; }
  size_t bytes() const { return bytes_; }
  size_t chunks() const { return chunks_.size(); }

  // A compact binary form for the shim's output file.
  std::string Serialize() const;
  static Result<OutputRing> Parse(std::string_view data);

 private:
  struct Chunk {
    Stream stream;
    std::string data;
  };
  std::deque<Chunk> chunks_;
  size_t bytes_ = 0;
  bool truncated_ = false;
};

}  // namespace adapt::runtime
