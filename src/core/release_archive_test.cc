#include "core/release_archive.h"

#include <gtest/gtest.h>

#include <cstring>

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

std::string Check(const std::string& tar) {
  size_t at = 0;
  return FirstEscapingEntry([&](char* buf, size_t n) -> long {
    size_t k = std::min(n, tar.size() - at);
    std::memcpy(buf, tar.data() + at, k);
    at += k;
    return static_cast<long>(k);
  });
}

TEST(FirstEscapingEntry, FilesDirectoriesAndLinksInsideAreKept) {
  std::string tar = Entry("site/", agent::TarEntry::kDirectory) +
                    Entry("site/index.html", agent::TarEntry::kFile, "", "hello\n") +
                    Entry("site/alias.html", agent::TarEntry::kSymlink, "index.html") +
                    Entry("site/up.html", agent::TarEntry::kSymlink, "../site/index.html") +
                    Entry("site/hard.html", agent::TarEntry::kHardLink, "site/index.html") +
                    agent::TarTrailer();
  EXPECT_EQ(Check(tar), "");
}

TEST(FirstEscapingEntry, SymlinksOutOfThePathAreRefused) {
  EXPECT_NE(Check(Entry("pw", agent::TarEntry::kSymlink, "/etc/passwd") + agent::TarTrailer())
                .find("symlink pointing outside source_path (/etc/passwd)"),
            std::string::npos);
  EXPECT_NE(
      Check(Entry("a/pw", agent::TarEntry::kSymlink, "../../etc/passwd") + agent::TarTrailer())
          .find("symlink pointing outside"),
      std::string::npos);
}

TEST(FirstEscapingEntry, NamesThatClimbOutAndOutsideHardLinksAreRefused) {
  EXPECT_NE(Check(Entry("../evil", agent::TarEntry::kFile) + agent::TarTrailer()), "");
  EXPECT_NE(Check(Entry("/etc/evil", agent::TarEntry::kFile) + agent::TarTrailer()), "");
  EXPECT_NE(Check(Entry("h", agent::TarEntry::kHardLink, "../../etc/shadow") + agent::TarTrailer())
                .find("hard link outside"),
            std::string::npos);
}

TEST(FirstEscapingEntry, ATruncatedArchiveIsRefused) {
  std::string tar = Entry("big", agent::TarEntry::kFile, "", std::string(2000, 'x'));
  EXPECT_NE(Check(tar.substr(0, 1024)).find("malformed"), std::string::npos);
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
