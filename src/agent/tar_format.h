// A small ustar/pax tar reader and writer: the static agent cannot link libarchive's
// dependencies. Writes ustar headers, with a pax extended header ahead of any entry whose
// name, link or size does not fit ustar's fields. Reads ustar, pax ('x'; 'g' is skipped)
// and GNU long names ('L', 'K').
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace adapt::agent {

constexpr size_t kTarBlock = 512;

struct TarEntry {
  enum Type : char { kFile = '0', kHardLink = '1', kSymlink = '2', kDirectory = '5' };
  std::string name;  // as stored: relative, '/'-separated; directories may end in '/'
  char type = kFile;
  uint64_t size = 0;  // bytes of data that follow (files only)
  uint32_t mode = 0644;
  int64_t mtime = 0;  // seconds since the epoch
  std::string link;   // symlink or hard link target
};

// The header block(s) of `entry`: a multiple of kTarBlock bytes.
std::string EncodeTarHeader(const TarEntry& entry);
// Zero bytes that pad `size` bytes of data to a whole block.
size_t TarPadding(uint64_t size);
// The two zero blocks that end an archive.
std::string TarTrailer();

// Reads entries from a byte source. `read` fills up to n bytes and returns how many (0 at
// end of input, -1 on error).
class TarReader {
 public:
  using ReadFn = std::function<long(char*, size_t)>;
  explicit TarReader(ReadFn read) : read_(std::move(read)) {}

  // 1: `entry` holds the next entry; 0: the archive ended; -1: malformed or truncated input,
  // described by error(). Skips what is left of the previous entry's data.
  int Next(TarEntry& entry);
  // Reads up to n bytes of the current entry's data; 0 once it is all read, -1 on error.
  long ReadData(char* buf, size_t n);
  const std::string& error() const { return error_; }

 private:
  bool ReadFull(char* buf, size_t n);
  bool Skip(uint64_t n);
  int Fail(std::string message);

  ReadFn read_;
  uint64_t remaining_ = 0;  // data bytes of the current entry not yet read
  uint64_t padding_ = 0;    // then this many padding bytes
  std::string error_;
};

// A relative archive name made safe to extract: "./" prefixes, repeated and trailing
// slashes dropped. Empty result with `why` set when the name is absolute, contains "..",
// or is NUL-laden; empty without `why` when it names the root itself (".").
std::string CleanArchiveName(const std::string& name, std::string& why);

// True when a symlink at archive name `name` (cleaned) pointing to `target` stays inside
// the extraction root, judged on the text alone. Absolute targets never do.
bool SymlinkStaysInside(const std::string& name, const std::string& target);

}  // namespace adapt::agent
