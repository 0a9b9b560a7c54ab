#include "agent/tar_format.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace adapt::agent {
namespace {

// ustar header field offsets and sizes.
constexpr size_t kNameOff = 0, kNameLen = 100;
constexpr size_t kModeOff = 100;
constexpr size_t kSizeOff = 124, kMtimeOff = 136, kChksumOff = 148, kTypeOff = 156;
constexpr size_t kLinkOff = 157, kLinkLen = 100;
constexpr size_t kMagicOff = 257, kPrefixOff = 345, kPrefixLen = 155;
constexpr uint64_t kMaxOctalSize = 077777777777ULL;  // 11 octal digits

void PutOctal(char* field, size_t len, uint64_t value) {
  // len-1 digits and a NUL terminator.
  field[len - 1] = '\0';
  for (size_t i = len - 1; i-- > 0;) {
    field[i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
}

void PutText(char* field, size_t len, const std::string& s) {
  std::memcpy(field, s.data(), std::min(len, s.size()));
}

unsigned Checksum(const char* block) {
  unsigned sum = 0;
  for (size_t i = 0; i < kTarBlock; ++i) {
    bool in_field = i >= kChksumOff && i < kChksumOff + 8;
    sum += in_field ? ' ' : static_cast<unsigned char>(block[i]);
  }
  return sum;
}

std::string UstarBlock(const TarEntry& e, const std::string& name, const std::string& prefix,
                       const std::string& link, uint64_t size) {
  std::string block(kTarBlock, '\0');
  char* b = block.data();
  PutText(b + kNameOff, kNameLen, name);
  PutOctal(b + kModeOff, 8, e.mode & 07777);
  PutOctal(b + 108, 8, 0);  // uid
  PutOctal(b + 116, 8, 0);  // gid
  PutOctal(b + kSizeOff, 12, size);
  PutOctal(b + kMtimeOff, 12, static_cast<uint64_t>(std::max<int64_t>(0, e.mtime)));
  b[kTypeOff] = e.type;
  PutText(b + kLinkOff, kLinkLen, link);
  std::memcpy(b + kMagicOff,
              "ustar\0"
              "00",
              8);
  PutText(b + kPrefixOff, kPrefixLen, prefix);
  std::memset(b + kChksumOff, ' ', 8);
  unsigned sum = Checksum(b);
  PutOctal(b + kChksumOff, 7, sum);
  b[kChksumOff + 7] = ' ';
  return block;
}

std::string PaxRecord(const std::string& key, const std::string& value) {
  // "<len> key=value\n" where len counts the whole record, its own digits included.
  size_t body = key.size() + value.size() + 3;  // space, '=', '\n'
  size_t len = body + 1;
  while (std::to_string(len).size() + body != len) len = std::to_string(len).size() + body;
  return std::to_string(len) + " " + key + "=" + value + "\n";
}

// Splits a name into ustar's prefix and name fields; false when it cannot.
bool SplitUstarName(const std::string& full, std::string& prefix, std::string& name) {
  if (full.size() <= kNameLen) {
    prefix.clear();
    name = full;
    return true;
  }
  for (size_t slash = full.find('/'); slash != std::string::npos;
       slash = full.find('/', slash + 1)) {
    if (slash <= kPrefixLen && full.size() - slash - 1 <= kNameLen && slash + 1 < full.size()) {
      prefix = full.substr(0, slash);
      name = full.substr(slash + 1);
      return true;
    }
  }
  return false;
}

bool ParseOctal(const char* field, size_t len, uint64_t& out) {
  // GNU base-256 for large values: high bit of the first byte set.
  if (static_cast<unsigned char>(field[0]) & 0x80) {
    uint64_t v = static_cast<unsigned char>(field[0]) & 0x7f;
    for (size_t i = 1; i < len; ++i) {
      if (v >> 56) return false;
      v = (v << 8) | static_cast<unsigned char>(field[i]);
    }
    out = v;
    return true;
  }
  uint64_t v = 0;
  size_t i = 0;
  while (i < len && field[i] == ' ') ++i;
  for (; i < len && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (v >> 60) return false;
    v = v * 8 + static_cast<uint64_t>(field[i] - '0');
  }
  for (; i < len; ++i) {
    if (field[i] != ' ' && field[i] != '\0') return false;
  }
  out = v;
  return true;
}

std::string FieldText(const char* field, size_t len) {
  return std::string(field, strnlen(field, len));
}

}  // namespace

std::string EncodeTarHeader(const TarEntry& e) {
  std::string prefix, name, pax;
  if (!SplitUstarName(e.name, prefix, name)) {
    pax += PaxRecord("path", e.name);
    prefix.clear();
    name = e.name.substr(0, kNameLen);
  }
  std::string link = e.link;
  if (link.size() > kLinkLen) {
    pax += PaxRecord("linkpath", link);
    link = link.substr(0, kLinkLen);
  }
  uint64_t size = e.type == TarEntry::kFile ? e.size : 0;
  if (size > kMaxOctalSize) pax += PaxRecord("size", std::to_string(size));
  std::string out;
  if (!pax.empty()) {
    TarEntry x;
    x.type = 'x';
    x.mode = 0644;
    x.mtime = e.mtime;
    out += UstarBlock(x, "PaxHeaders/" + name.substr(0, 80), "", "", pax.size());
    out += pax;
    out.append(TarPadding(pax.size()), '\0');
  }
  out += UstarBlock(e, name, prefix, link, std::min(size, kMaxOctalSize));
  return out;
}

size_t TarPadding(uint64_t size) {
  return static_cast<size_t>((kTarBlock - size % kTarBlock) % kTarBlock);
}

std::string TarTrailer() { return std::string(2 * kTarBlock, '\0'); }

bool TarReader::ReadFull(char* buf, size_t n) {
  while (n > 0) {
    long got = read_(buf, n);
    if (got <= 0) return false;
    buf += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool TarReader::Skip(uint64_t n) {
  char buf[8192];
  while (n > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, sizeof buf));
    if (!ReadFull(buf, chunk)) return false;
    n -= chunk;
  }
  return true;
}

int TarReader::Fail(std::string message) {
  error_ = std::move(message);
  return -1;
}

long TarReader::ReadData(char* buf, size_t n) {
  if (remaining_ == 0) return 0;
  size_t want = static_cast<size_t>(std::min<uint64_t>(n, remaining_));
  long got = read_(buf, want);
  if (got <= 0) {
    error_ = "the archive ends in the middle of an entry";
    return -1;
  }
  remaining_ -= static_cast<uint64_t>(got);
  return got;
}

int TarReader::Next(TarEntry& entry) {
  if (!Skip(remaining_ + padding_)) return Fail("the archive ends in the middle of an entry");
  remaining_ = padding_ = 0;
  std::string pax_path, pax_link, long_name, long_link;
  bool pax_size_set = false;
  uint64_t pax_size = 0;
  char block[kTarBlock];
  for (;;) {
    long got = read_(block, kTarBlock);
    if (got == 0) return 0;  // no trailer: tolerated, like GNU tar
    if (got < 0 || (got < static_cast<long>(kTarBlock) &&
                    !ReadFull(block + got, kTarBlock - static_cast<size_t>(got))))
      return Fail("the archive is truncated");
    if (std::all_of(block, block + kTarBlock, [](char c) { return c == '\0'; })) return 0;
    uint64_t sum = 0, size = 0, mode = 0, mtime = 0;
    if (!ParseOctal(block + kChksumOff, 8, sum) || sum != Checksum(block))
      return Fail("a tar header has a bad checksum");
    if (!ParseOctal(block + kSizeOff, 12, size) || !ParseOctal(block + kModeOff, 8, mode) ||
        !ParseOctal(block + kMtimeOff, 12, mtime))
      return Fail("a tar header has a malformed number");
    char type = block[kTypeOff] == '\0' ? static_cast<char>(TarEntry::kFile) : block[kTypeOff];
    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      if (size > (1 << 20)) return Fail("a tar extended header is larger than 1 MiB");
      std::string data(size, '\0');
      if (!ReadFull(data.data(), size) || !Skip(TarPadding(size)))
        return Fail("the archive is truncated");
      if (type == 'L') long_name = data.c_str();
      if (type == 'K') long_link = data.c_str();
      if (type != 'x') continue;
      size_t pos = 0;
      while (pos < data.size()) {
        size_t space = data.find(' ', pos);
        if (space == std::string::npos) return Fail("a pax header is malformed");
        // Digits only: stoul also takes "-1" (the largest length), "+5" and " 5", and a
        // length past the header's end wrapped pos + len round to an earlier record.
        const std::string digits = data.substr(pos, space - pos);
        if (digits.empty() || digits.size() > 7 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
          return Fail("a pax header is malformed");
        const size_t len = std::stoul(digits);
        if (len < space - pos + 2 || len > data.size() - pos || data[pos + len - 1] != '\n')
          return Fail("a pax header is malformed");
        std::string record = data.substr(space + 1, pos + len - space - 2);
        size_t eq = record.find('=');
        if (eq == std::string::npos) return Fail("a pax header is malformed");
        std::string key = record.substr(0, eq), value = record.substr(eq + 1);
        if (key == "path") pax_path = value;
        if (key == "linkpath") pax_link = value;
        if (key == "size") {
          if (value.empty() || value.size() > 19 ||
              value.find_first_not_of("0123456789") != std::string::npos)
            return Fail("a pax header is malformed");
          pax_size = std::stoull(value);
          pax_size_set = true;
        }
        pos += len;
      }
      continue;
    }
    entry = TarEntry();
    std::string prefix = std::memcmp(block + kMagicOff, "ustar", 5) == 0
                             ? FieldText(block + kPrefixOff, kPrefixLen)
                             : std::string();
    entry.name = FieldText(block + kNameOff, kNameLen);
    if (!prefix.empty()) entry.name = prefix + "/" + entry.name;
    if (!long_name.empty()) entry.name = long_name;
    if (!pax_path.empty()) entry.name = pax_path;
    entry.link = FieldText(block + kLinkOff, kLinkLen);
    if (!long_link.empty()) entry.link = long_link;
    if (!pax_link.empty()) entry.link = pax_link;
    if (pax_size_set) size = pax_size;
    // Old tars mark directories with a trailing slash on a regular-file type.
    if ((type == TarEntry::kFile || type == '7') && !entry.name.empty() && entry.name.back() == '/')
      type = TarEntry::kDirectory;
    if (type == '7') type = TarEntry::kFile;  // contiguous file
    entry.type = type;
    entry.size = size;
    entry.mode = static_cast<uint32_t>(mode & 07777);
    entry.mtime = static_cast<int64_t>(mtime);
    // Links, directories and devices carry no data, but skip what a header claims.
    remaining_ = size;
    padding_ = TarPadding(size);
    if (type != TarEntry::kFile) entry.size = 0;
    return 1;
  }
}

std::string CleanArchiveName(const std::string& name, std::string& why) {
  why.clear();
  if (name.find('\0') != std::string::npos) {
    why = "contains a NUL byte";
    return "";
  }
  if (!name.empty() && name[0] == '/') {
    why = "is an absolute path";
    return "";
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == std::string::npos) slash = name.size();
    std::string part = name.substr(start, slash - start);
    if (part == "..") {
      why = "contains '..'";
      return "";
    }
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

bool SymlinkStaysInside(const std::string& name, const std::string& target) {
  if (target.empty() || target[0] == '/') return false;
  // Depth of the link's directory below the root, then walk the target's components.
  long depth = static_cast<long>(std::count(name.begin(), name.end(), '/'));
  size_t start = 0;
  while (start <= target.size()) {
    size_t slash = target.find('/', start);
    if (slash == std::string::npos) slash = target.size();
    std::string part = target.substr(start, slash - start);
    if (part == "..") {
      if (--depth < 0) return false;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    start = slash + 1;
  }
  return true;
}

}  // namespace adapt::agent
