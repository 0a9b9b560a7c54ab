#include "core/release_archive.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "agent/release_stream.h"
#include "agent/tar_format.h"
#include "core/app_service.h"

namespace adapt::core {
namespace {

std::string Entry(const std::string& name, char type, const std::string& link = "",
                  const std::string& data = "") {
  agent::TarEntry e;
  e.name = name;
  e.type = type;
  e.link = link;
  e.size = data.size();
  return agent::EncodeTarHeader(e) + data + std::string(agent::TarPadding(data.size()), '\0');
}

agent::ByteSource From(const std::string& bytes) {
  auto at = std::make_shared<size_t>(0);
  return [bytes, at](char* buf, size_t n) -> long {
    size_t k = std::min(n, bytes.size() - *at);
    std::memcpy(buf, bytes.data() + *at, k);
    *at += k;
    return static_cast<long>(k);
  };
}

// A tar as a release is stored: zstd-compressed, read back in small, odd pieces.
std::string Zstd(const std::string& tar) {
  agent::ReleaseCompressor packed(From(tar), 1ull << 40);
  std::string out;
  char buf[777];
  for (;;) {
    long n = packed.Read(buf, sizeof buf);
    EXPECT_GE(n, 0) << packed.error();
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

std::string Check(const std::string& stored, uint64_t max_unpacked = 1ull << 30) {
  return FirstEscapingEntry(From(stored), max_unpacked);
}

// Plain (a store from before releases were compressed) and compressed, the same verdict.
std::string CheckBoth(const std::string& tar) {
  std::string plain = Check(tar), packed = Check(Zstd(tar));
  EXPECT_EQ(plain, packed);
  return packed;
}

TEST(FirstEscapingEntry, FilesDirectoriesAndLinksInsideAreKept) {
  std::string tar = Entry("site/", agent::TarEntry::kDirectory) +
                    Entry("site/index.html", agent::TarEntry::kFile, "", "hello\n") +
                    Entry("site/alias.html", agent::TarEntry::kSymlink, "index.html") +
                    Entry("site/up.html", agent::TarEntry::kSymlink, "../site/index.html") +
                    Entry("site/hard.html", agent::TarEntry::kHardLink, "site/index.html") +
                    agent::TarTrailer();
  EXPECT_EQ(CheckBoth(tar), "");
}

TEST(FirstEscapingEntry, SymlinksOutOfThePathAreRefused) {
  EXPECT_NE(CheckBoth(Entry("pw", agent::TarEntry::kSymlink, "/etc/passwd") + agent::TarTrailer())
                .find("symlink pointing outside source_path (/etc/passwd)"),
            std::string::npos);
  EXPECT_NE(
      CheckBoth(Entry("a/pw", agent::TarEntry::kSymlink, "../../etc/passwd") + agent::TarTrailer())
          .find("symlink pointing outside"),
      std::string::npos);
}

TEST(FirstEscapingEntry, NamesThatClimbOutAndOutsideHardLinksAreRefused) {
  EXPECT_NE(CheckBoth(Entry("../evil", agent::TarEntry::kFile) + agent::TarTrailer()), "");
  EXPECT_NE(CheckBoth(Entry("/etc/evil", agent::TarEntry::kFile) + agent::TarTrailer()), "");
  EXPECT_NE(
      CheckBoth(Entry("h", agent::TarEntry::kHardLink, "../../etc/shadow") + agent::TarTrailer())
          .find("hard link outside"),
      std::string::npos);
}

TEST(FirstEscapingEntry, ATruncatedArchiveIsRefused) {
  std::string tar = Entry("big", agent::TarEntry::kFile, "", std::string(2000, 'x'));
  EXPECT_NE(Check(tar.substr(0, 1024)).find("malformed"), std::string::npos);
}

TEST(FirstEscapingEntry, DevicesAndFifosAreRefused) {
  EXPECT_NE(CheckBoth(Entry("dev/sda", '4') + agent::TarTrailer()).find("device, FIFO"),
            std::string::npos);
  EXPECT_NE(CheckBoth(Entry("pipe", '6') + agent::TarTrailer()).find("device, FIFO"),
            std::string::npos);
}

TEST(FirstEscapingEntry, AZstdBombStopsAtTheUnpackedLimit) {
  // 8 MiB of zeros compress to a few hundred bytes.
  std::string tar =
      Entry("zeros", agent::TarEntry::kFile, "", std::string(8 << 20, '\0')) + agent::TarTrailer();
  std::string stored = Zstd(tar);
  ASSERT_LT(stored.size(), 64u << 10);
  EXPECT_EQ(Check(stored, 16 << 20), "");
  EXPECT_NE(Check(stored, 1 << 20).find("unpacks to more than 1048576 bytes"), std::string::npos);
  // A plain tar counts the same.
  EXPECT_NE(Check(tar, 1 << 20).find("unpacks to more than"), std::string::npos);
}

TEST(FirstEscapingEntry, ABombHiddenAfterTheTarsEndStillCounts) {
  std::string tar = Entry("a", agent::TarEntry::kFile, "", "a\n") + agent::TarTrailer() +
                    std::string(4 << 20, '\0');
  EXPECT_NE(Check(Zstd(tar), 1 << 20).find("unpacks to more than"), std::string::npos);
}

TEST(FirstEscapingEntry, TruncatedOrCorruptFramesAreRefused) {
  std::string tar =
      Entry("a", agent::TarEntry::kFile, "", std::string(100000, 'x')) + agent::TarTrailer();
  std::string stored = Zstd(tar);
  EXPECT_NE(Check(stored.substr(0, stored.size() - 3)), "");
  std::string corrupt = stored;
  for (size_t i = 8; i < corrupt.size(); i += 7) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  EXPECT_NE(Check(corrupt), "");
}

TEST(ReleaseCompressor, RoundTripsAndStopsPastItsUnpackedLimit) {
  std::string tar =
      Entry("f", agent::TarEntry::kFile, "", std::string(300000, 'q')) + agent::TarTrailer();
  std::string stored = Zstd(tar);
  EXPECT_LT(stored.size(), tar.size());
  agent::ReleaseUnpacker unpacker(From(stored), 1 << 20);
  std::string back;
  char buf[1000];
  for (long n; (n = unpacker.Read(buf, sizeof buf)) > 0;) back.append(buf, static_cast<size_t>(n));
  EXPECT_TRUE(unpacker.compressed());
  EXPECT_EQ(back, tar);

  agent::ReleaseCompressor small(From(tar), 100000);
  long n = 0;
  while ((n = small.Read(buf, sizeof buf)) > 0) {
  }
  EXPECT_EQ(n, -1);
  EXPECT_NE(small.error().find("unpacks to more than 100000 bytes"), std::string::npos);
}

}  // namespace
}  // namespace adapt::core

// Beside the release's checks: how long a failing app's next replica waits.
TEST(ReplicaRestartDelay, DoublesFromTwoSecondsUpToAMinute) {
  using std::chrono::seconds;
  EXPECT_EQ(adapt::core::ReplicaRestartDelay(0), seconds(0));
  EXPECT_EQ(adapt::core::ReplicaRestartDelay(1), seconds(2));
  EXPECT_EQ(adapt::core::ReplicaRestartDelay(2), seconds(4));
  EXPECT_EQ(adapt::core::ReplicaRestartDelay(5), seconds(32));
  EXPECT_EQ(adapt::core::ReplicaRestartDelay(6), seconds(60));
  EXPECT_EQ(adapt::core::ReplicaRestartDelay(1000), seconds(60));
}
