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

TEST(WorkspaceCopy, TheFileOpenedIsJudgedByTheSameRulesAsTheNameAskedFor) {
  EXPECT_TRUE(CheckOpenedWorkspaceFile("/workspace/a.txt", "/workspace/out/a.txt").ok());
  for (const char* outside : {"/etc/shadow", "/workspacex/a.txt", "/workspace", "/", "a.txt"}) {
    Status st = CheckOpenedWorkspaceFile("/workspace/report.txt", outside);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << outside;
    EXPECT_EQ(st.field(), "workspace_path") << outside;
  }
  EXPECT_EQ(CheckOpenedWorkspaceFile("/workspace/report.txt", "/etc/shadow").message(),
            "/workspace/report.txt resolves to /etc/shadow, outside /workspace; it is not "
            "copied to object storage");
  for (const char* secret : {"/workspace/.env", "/workspace/.env (deleted)", "/workspace/k.pem",
                             "/workspace/.ssh/config"}) {
    Status st = CheckOpenedWorkspaceFile("/workspace/notenv", secret);
    EXPECT_EQ(st.field(), "workspace_path") << secret;
    EXPECT_NE(st.message().find("looks like a credential file"), std::string::npos) << secret;
  }
  EXPECT_EQ(CheckOpenedWorkspaceFile("/workspace/a.txt", "").code(), Code::kInternal);
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
