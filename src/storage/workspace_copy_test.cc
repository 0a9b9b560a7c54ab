#include "storage/workspace_copy.h"

#include <gtest/gtest.h>

#include <cstring>

namespace adapt::storage {
namespace {

TEST(WorkspaceCopy, PathsStayUnderWorkspace) {
  EXPECT_EQ(*WorkspacePath("out/report.txt"), "/workspace/out/report.txt");
  EXPECT_EQ(*WorkspacePath("/workspace/a.txt"), "/workspace/a.txt");
  EXPECT_FALSE(WorkspacePath("/etc/passwd").ok());
  EXPECT_FALSE(WorkspacePath("../etc/passwd").ok());
  EXPECT_FALSE(WorkspacePath("/workspace/../etc/shadow").ok());
  EXPECT_FALSE(WorkspacePath("").ok());
}

TEST(WorkspaceCopy, SecretLookingNamesAreRefused) {
  for (const char* p :
       {"/workspace/.env", "/workspace/id_rsa", "/workspace/x/server.pem", "/workspace/.ssh/config",
        "/workspace/.aws/credentials", "/workspace/.env.prod", "/workspace/tls.KEY"})
    EXPECT_TRUE(LooksLikeSecretPath(p)) << p;
  for (const char* p :
       {"/workspace/report.pdf", "/workspace/keys.txt", "/workspace/environment.md"})
    EXPECT_FALSE(LooksLikeSecretPath(p)) << p;
}

TEST(WorkspaceCopy, ScannerFindsMarkersAcrossChunks) {
  SecretScanner plain;
  std::string text(100000, 'a');
  EXPECT_TRUE(plain.Feed(text.data(), text.size()));
  EXPECT_FALSE(plain.found());
  SecretScanner split;
  std::string a = "hello -----BEGIN RSA PRIV", b = "ATE KEY-----\nMII";
  EXPECT_TRUE(split.Feed(a.data(), a.size()));
  EXPECT_FALSE(split.Feed(b.data(), b.size()));
  EXPECT_TRUE(split.found());
  for (const char* s : {"key=AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                        "SANDBOX_STORAGE_TOKEN=stk_x.y"}) {
    SecretScanner sc;
    EXPECT_FALSE(sc.Feed(s, std::strlen(s))) << s;
  }
  EXPECT_EQ(ContentTypeFor("a/index.HTML"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("blob"), "application/octet-stream");
}

}  // namespace
}  // namespace adapt::storage
