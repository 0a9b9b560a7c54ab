// What a download writes on the user's machine when the sandbox chose the bytes: a file through
// a name made beforehand (a symlink its directory brought) is never followed, and an extracted
// archive makes no links out of its target, no device nodes and no setuid bits.
#include "cli/file_transfer.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/test_http_server.h"
#include "os/temp_dir.h"

namespace adapt::cli {
namespace {

namespace fs = std::filesystem;
using testing::CannedResponse;
using testing::TestHttpServer;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TarEntry {
  std::string name;
  unsigned type;  // AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFIFO
  unsigned mode;
  std::string content_or_link;
};

// A tar of `entries` in a temporary file, rewound.
std::unique_ptr<FILE, decltype(&std::fclose)> Tar(const std::vector<TarEntry>& entries) {
  std::unique_ptr<FILE, decltype(&std::fclose)> f(std::tmpfile(), &std::fclose);
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_open_FILE(a, f.get());
  for (const auto& t : entries) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, t.name.c_str());
    archive_entry_set_filetype(e, t.type);
    archive_entry_set_perm(e, t.mode);
    if (t.type == AE_IFLNK) archive_entry_set_symlink(e, t.content_or_link.c_str());
    if (t.type == AE_IFREG)
      archive_entry_set_size(e, static_cast<la_int64_t>(t.content_or_link.size()));
    archive_write_header(a, e);
    if (t.type == AE_IFREG)
      archive_write_data(a, t.content_or_link.data(), t.content_or_link.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  std::rewind(f.get());
  return f;
}

TEST(DownloadToFile, ANameMadeBeforehandIsNeverFollowed) {
  os::TempDir tmp("cli-download");
  const fs::path dir = tmp.path();
  std::ofstream(dir / "victim") << "mine";
  // What an old download's name was: a sandbox's directory, copied here, can hold it.
  fs::create_symlink(dir / "victim", dir / "f.adapt-part");
  TestHttpServer server(CannedResponse(200, "pwned", "application/octet-stream"));
  ApiClient client(server.url(), "k");
  ASSERT_TRUE(DownloadToFile(client, "/x", (dir / "f").string()).ok());
  EXPECT_EQ(Read(dir / "victim"), "mine");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir / "f")));
  EXPECT_EQ(Read(dir / "f"), "pwned");
  // A new file's mode, not mkstemp's 0600.
  mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(static_cast<mode_t>(fs::status(dir / "f").permissions()) & 0777, 0666 & ~mask);
}

TEST(ExtractTar, MakesNoLinkOutNoDeviceAndNoSetuidBit) {
  os::TempDir tmp("cli-extract");
  const fs::path out = fs::path(tmp.path()) / "out";
  auto tar = Tar({{"tool", AE_IFREG, 04777, "#!/bin/sh\n"},
                  {"d", AE_IFDIR, 0777, ""},
                  {"d/inside", AE_IFLNK, 0777, "../tool"},
                  {"passwd", AE_IFLNK, 0777, "/etc/passwd"},
                  {"d/up", AE_IFLNK, 0777, "../../outside"}});
  std::vector<std::string> skipped;
  ASSERT_TRUE(ExtractTar(tar.get(), out.string(), &skipped).ok());
  mode_t mask = ::umask(0);
  ::umask(mask);
  auto mode = [](const fs::path& p) {
    struct stat st {};
    ::lstat(p.c_str(), &st);
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode(out / "tool"), 0777 & ~mask);  // executable, no setuid, the umask applied
  EXPECT_EQ(mode(out / "d"), 0777 & ~mask);
  EXPECT_TRUE(fs::is_symlink(out / "d/inside"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out / "passwd")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out / "d/up")));
  EXPECT_EQ(skipped, (std::vector<std::string>{"passwd", "d/up"}));
}

TEST(ExtractTar, RefusesADeviceOrFifoEntry) {
  os::TempDir tmp("cli-extract-fifo");
  const fs::path out = fs::path(tmp.path()) / "out";
  auto tar = Tar({{"pipe", AE_IFIFO, 0644, ""}});
  Status st = ExtractTar(tar.get(), out.string());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a file, directory or link"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(fs::symlink_status(out / "pipe")));
}

}  // namespace
}  // namespace adapt::cli
