// StorageFiles over a directory standing in for a volume's workspace, and FileService reading a
// durable sandbox's /workspace from its storage while the sandbox does not run. The tree is the
// tenant's: its links and names must never reach the host's files.
#include "core/storage_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/core_test_fixture.h"
#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::core {
namespace {

class StorageFilesTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    testing_support::CoreTest::SetUp();
    ASSERT_TRUE(os::WriteFileAtomic(workspace_.path() + "/notes.txt", "results: 42\n", 0644).ok());
    ASSERT_TRUE(os::WriteFileAtomic(host_.path() + "/secret", "host secret\n", 0600).ok());
  }
  Principal Who(const std::string& org) { return Principal{org, "key_1", false}; }

  os::TempDir workspace_{"storage-files"};
  os::TempDir host_{"storage-files-host"};  // stands in for the host's own files
  // The organization's volume "data" is the workspace above; nothing else exists.
  StorageFiles files_{
      [this](const std::string& org_id, const std::string& name) -> Result<std::string> {
        if (org_id != org_ || name != "data") return NotFound("storage '" + name + "' not found");
        return workspace_.path();
      }};
};

TEST_F(StorageFilesTest, ReadsTextRelativeToWorkspaceOrUnderIt) {
  auto relative = files_.ReadText(Who(org_), "data", "notes.txt", 1024);
  ASSERT_TRUE(relative.ok()) << relative.status().message();
  EXPECT_EQ(*relative, "results: 42\n");
  auto absolute = files_.ReadText(Who(org_), "data", "/workspace/notes.txt", 1024);
  ASSERT_TRUE(absolute.ok()) << absolute.status().message();
  EXPECT_EQ(*absolute, "results: 42\n");
  auto missing = files_.ReadText(Who(org_), "data", "none.txt", 1024);
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message(), "/workspace/none.txt does not exist in storage 'data'");
}

TEST_F(StorageFilesTest, APathOutsideTheWorkspaceIsRefused) {
  for (const char* path : {"/etc/passwd", "/workspacex/notes.txt", "/"}) {
    auto text = files_.ReadText(Who(org_), "data", path, 1024);
    ASSERT_FALSE(text.ok()) << path;
    EXPECT_EQ(text.status().code(), Code::kInvalidArgument) << path;
    EXPECT_EQ(text.status().field(), "path") << path;
  }
  EXPECT_EQ(files_.ReadText(Who(org_), "data", std::string("a\0b", 3), 1024).status().code(),
            Code::kInvalidArgument);
}

TEST_F(StorageFilesTest, LinksAndDotDotResolveInsideTheVolume) {
  const std::string secret = host_.path() + "/secret";
  ASSERT_EQ(::symlink(secret.c_str(), (workspace_.path() + "/leak").c_str()), 0);
  ASSERT_EQ(::symlink("/notes.txt", (workspace_.path() + "/inside").c_str()), 0);
  // The host's file is not reached, by a link or by climbing out.
  auto leak = files_.ReadText(Who(org_), "data", "leak", 1024);
  EXPECT_EQ(leak.status().code(), Code::kNotFound);
  std::string up = "/workspace";
  for (int i = 0; i < 12; ++i) up += "/..";
  auto climbed = files_.ReadText(Who(org_), "data", up + secret, 1024);
  EXPECT_EQ(climbed.status().code(), Code::kNotFound);
  // The message echoes the path asked for, never where the volume is on the host.
  EXPECT_EQ(climbed.status().message().find(workspace_.path()), std::string::npos)
      << climbed.status().message();
  // An absolute link names the volume's own root.
  auto inside = files_.ReadText(Who(org_), "data", "inside", 1024);
  ASSERT_TRUE(inside.ok()) << inside.status().message();
  EXPECT_EQ(*inside, "results: 42\n");
}

TEST_F(StorageFilesTest, OnlyARegularFileIsReadAndAFifoDoesNotBlock) {
  ASSERT_EQ(::mkfifo((workspace_.path() + "/pipe").c_str(), 0644), 0);
  EXPECT_EQ(files_.ReadText(Who(org_), "data", "pipe", 1024).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(files_.Open(Who(org_), "data", "/workspace").status().code(), Code::kInvalidArgument);
}

TEST_F(StorageFilesTest, BinaryInvalidUtf8AndOversizeAreRefused) {
  ASSERT_TRUE(os::WriteFileAtomic(workspace_.path() + "/nul", std::string("a\0b", 3), 0644).ok());
  ASSERT_TRUE(os::WriteFileAtomic(workspace_.path() + "/latin1", "caf\xe9", 0644).ok());
  EXPECT_EQ(files_.ReadText(Who(org_), "data", "nul", 1024).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(files_.ReadText(Who(org_), "data", "latin1", 1024).status().code(),
            Code::kInvalidArgument);
  auto big = files_.ReadText(Who(org_), "data", "notes.txt", 4);
  EXPECT_EQ(big.status().code(), Code::kPayloadTooLarge);
}

TEST_F(StorageFilesTest, AnotherOrganizationsStorageIsNotFound) {
  EXPECT_EQ(files_.ReadText(Who("org_other"), "data", "notes.txt", 1024).status().code(),
            Code::kNotFound);
  EXPECT_EQ(files_.Open(Who(org_), "../data", "notes.txt").status().code(), Code::kNotFound);
}

TEST_F(StorageFilesTest, ADownloadEndsAtTheSizeItHadWhenOpened) {
  auto reader = files_.Open(Who(org_), "data", "notes.txt");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->size(), 12u);
  EXPECT_STREQ((*reader)->served_by(), "storage");
  std::ofstream(workspace_.path() + "/notes.txt", std::ios::app) << "grown\n";
  std::string got;
  char buf[4];
  for (long n; (n = (*reader)->Read(buf, sizeof buf)) > 0;) got.append(buf, n);
  EXPECT_EQ(got, "results: 42\n");
  EXPECT_TRUE((*reader)->Finish().ok());
}

TEST_F(StorageFilesTest, ADurableSandboxThatDoesNotRunIsReadFromItsStorage) {
  FileService service(store_, runtime_);
  service.set_storage_files(&files_);
  store::SandboxRecord durable = NewSandbox("stopped");
  durable.config.storage = "data";
  durable = Insert(durable);
  std::string served_by;
  auto text = service.ReadText(Who(org_), durable.id, "notes.txt", 1024, &served_by);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "results: 42\n");
  EXPECT_EQ(served_by, "storage");
  // What lay outside /workspace went with the sandbox's own disk.
  auto outside = service.ReadText(Who(org_), durable.id, "/etc/hostname", 1024);
  EXPECT_EQ(outside.status().code(), Code::kConflict);
  // An instant sandbox keeps nothing once it stops; another organization sees no sandbox.
  store::SandboxRecord instant = Insert(NewSandbox("stopped"));
  EXPECT_EQ(service.ReadText(Who(org_), instant.id, "notes.txt", 1024).status().code(),
            Code::kConflict);
  EXPECT_EQ(service.ReadText(Who("org_other"), durable.id, "notes.txt", 1024).status().code(),
            Code::kNotFound);
}

}  // namespace
}  // namespace adapt::core
