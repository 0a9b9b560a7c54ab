#include "agent/tar_format.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "agent/file_util.h"

namespace adapt::agent {
namespace {

// A reader over a string, handing out at most `chunk` bytes per call.
TarReader::ReadFn StringSource(const std::string& data, size_t chunk = 1000) {
  auto pos = std::make_shared<size_t>(0);
  return [data, pos, chunk](char* buf, size_t n) -> long {
    size_t take = std::min({n, chunk, data.size() - *pos});
    std::memcpy(buf, data.data() + *pos, take);
    *pos += take;
    return static_cast<long>(take);
  };
}

std::string Archive(const std::vector<std::pair<TarEntry, std::string>>& entries) {
  std::string out;
  for (auto [e, data] : entries) {
    e.size = data.size();
    out += EncodeTarHeader(e) + data + std::string(TarPadding(data.size()), '\0');
  }
  return out + TarTrailer();
}

TEST(TarFormat, RoundTripsFilesDirectoriesAndLinks) {
  TarEntry dir{"d/", TarEntry::kDirectory, 0, 0755, 1700000000, ""};
  TarEntry file{"d/f.bin", TarEntry::kFile, 0, 0600, 1700000001, ""};
  TarEntry link{"d/l", TarEntry::kSymlink, 0, 0777, 1700000002, "f.bin"};
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  std::string tar = Archive({{dir, ""}, {file, bytes}, {link, ""}});
  EXPECT_EQ(tar.size() % kTarBlock, 0u);

  TarReader r(StringSource(tar, 7));
  TarEntry e;
  ASSERT_EQ(r.Next(e), 1) << r.error();
  EXPECT_EQ(e.name, "d/");
  EXPECT_EQ(e.type, TarEntry::kDirectory);
  EXPECT_EQ(e.mode, 0755u);
  ASSERT_EQ(r.Next(e), 1) << r.error();
  EXPECT_EQ(e.name, "d/f.bin");
  EXPECT_EQ(e.size, 256u);
  EXPECT_EQ(e.mtime, 1700000001);
  std::string got(300, '\0');
  size_t have = 0;
  for (long n; (n = r.ReadData(got.data() + have, got.size() - have)) > 0;) have += n;
  EXPECT_EQ(got.substr(0, have), bytes);
  ASSERT_EQ(r.Next(e), 1) << r.error();
  EXPECT_EQ(e.type, TarEntry::kSymlink);
  EXPECT_EQ(e.link, "f.bin");
  EXPECT_EQ(r.Next(e), 0);
}

TEST(TarFormat, SkipsUnreadDataAndUsesPaxForLongNames) {
  std::string long_name = std::string(150, 'a') + "/" + std::string(120, 'b');
  std::string long_link(200, 'c');
  TarEntry big{long_name, TarEntry::kFile, 0, 0644, 0, ""};
  TarEntry link{"x", TarEntry::kSymlink, 0, 0777, 0, long_link};
  std::string tar = Archive({{big, std::string(1000, 'z')}, {link, ""}});
  TarReader r(StringSource(tar));
  TarEntry e;
  ASSERT_EQ(r.Next(e), 1) << r.error();
  EXPECT_EQ(e.name, long_name);
  EXPECT_EQ(e.size, 1000u);
  ASSERT_EQ(r.Next(e), 1) << r.error();  // the data was skipped
  EXPECT_EQ(e.link, long_link);
  EXPECT_EQ(r.Next(e), 0);
}

TEST(TarFormat, UstarPrefixHoldsMediumNames) {
  std::string name = std::string(90, 'p') + "/" + std::string(90, 'n');
  std::string header = EncodeTarHeader({name, TarEntry::kFile, 0, 0644, 0, ""});
  EXPECT_EQ(header.size(), kTarBlock);  // no pax header needed
  TarReader r(StringSource(header + TarTrailer()));
  TarEntry e;
  ASSERT_EQ(r.Next(e), 1);
  EXPECT_EQ(e.name, name);
}

// A pax record's length is decimal digits that fit its header: stoul alone also took "+11"
// and "-1" (its largest value, which wrapped pos + len round to an earlier record).
TEST(TarFormat, PaxRecordLengthsAreDigitsWithinTheHeader) {
  auto first_entry = [](const std::string& records, TarEntry& e, std::string& error) {
    // A file's header made a pax header: ustar's type at 156, its checksum at 148 (six octal
    // digits, NUL, space, summed with the field as spaces).
    std::string pax =
        EncodeTarHeader({"PaxHeaders/f", TarEntry::kFile, records.size(), 0644, 0, ""});
    pax[156] = 'x';
    std::memset(&pax[148], ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : pax) sum += c;
    char field[8];
    std::snprintf(field, sizeof field, "%06o", sum);
    std::memcpy(&pax[148], field, 7);
    pax += records + std::string(TarPadding(records.size()), '\0');
    TarReader r(StringSource(pax + Archive({{{"f", TarEntry::kFile, 0, 0644, 0, ""}, "hello"}})));
    int got = r.Next(e);
    error = r.error();
    return got;
  };
  TarEntry e;
  std::string error;
  ASSERT_EQ(first_entry("10 path=a\n", e, error), 1) << error;
  EXPECT_EQ(e.name, "a");
  for (const std::string bad : {"+11 path=a\n", "-1 path=a\n", "11 path=a\n\n-1 x=y\n",
                                "99999999 path=a\n", "2 \n", "1 path=a\n", "12 path=a\n"}) {
    EXPECT_EQ(first_entry(bad, e, error), -1) << bad;
    EXPECT_NE(error.find("pax header is malformed"), std::string::npos) << bad << ": " << error;
  }
}

TEST(TarFormat, RejectsCorruptAndTruncatedArchives) {
  std::string tar = Archive({{{"f", TarEntry::kFile, 0, 0644, 0, ""}, "hello"}});
  std::string bad = tar;
  bad[0] = 'g';  // checksum no longer matches
  TarReader r1(StringSource(bad));
  TarEntry e;
  EXPECT_EQ(r1.Next(e), -1);
  EXPECT_NE(r1.error().find("checksum"), std::string::npos);

  TarReader r2(StringSource(tar.substr(0, kTarBlock + 2)));
  ASSERT_EQ(r2.Next(e), 1);
  char buf[16];
  EXPECT_EQ(r2.ReadData(buf, 2), 2);
  EXPECT_EQ(r2.ReadData(buf, sizeof buf), -1);

  TarReader r3(StringSource(tar.substr(0, 100)));
  EXPECT_EQ(r3.Next(e), -1);
}

TEST(TarFormat, ReadsGnuTarOutputWithoutTrailer) {
  TarReader r(StringSource(""));
  TarEntry e;
  EXPECT_EQ(r.Next(e), 0);
}

TEST(ArchiveNames, CleansAndRefusesEscapes) {
  std::string why;
  EXPECT_EQ(CleanArchiveName("./a//b/./c/", why), "a/b/c");
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(CleanArchiveName("./", why), "");
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(CleanArchiveName("/etc/passwd", why), "");
  EXPECT_EQ(why, "is an absolute path");
  EXPECT_EQ(CleanArchiveName("a/../../etc", why), "");
  EXPECT_EQ(why, "contains '..'");
  EXPECT_EQ(CleanArchiveName("..", why), "");
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(CleanArchiveName(std::string("a\0b", 3), why), "");
  EXPECT_FALSE(why.empty());
}

TEST(ArchiveNames, SymlinksMustStayInside) {
  EXPECT_TRUE(SymlinkStaysInside("a/l", "b"));
  EXPECT_TRUE(SymlinkStaysInside("a/l", "../b"));
  EXPECT_TRUE(SymlinkStaysInside("a/b/l", "../../c"));
  EXPECT_FALSE(SymlinkStaysInside("l", "../x"));
  EXPECT_FALSE(SymlinkStaysInside("a/l", "../../x"));
  EXPECT_FALSE(SymlinkStaysInside("a/l", "b/../../../x"));
  EXPECT_FALSE(SymlinkStaysInside("l", "/"));
  EXPECT_FALSE(SymlinkStaysInside("l", "/etc/passwd"));
  EXPECT_FALSE(SymlinkStaysInside("l", ""));
}

TEST(Utf8, Escapes) {
  EXPECT_EQ(JsonString("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\u000a\\u0001\"");
  EXPECT_EQ(JsonString("\xff"
                       "x"),
            "\"\\ufffdx\"");
  EXPECT_EQ(JsonString("\xc3\xa9"), "\"\xc3\xa9\"");
}

}  // namespace
}  // namespace adapt::agent
