// Every thread and every posted task of adaptd runs guarded (background_work.h): this test
// reads src/ and fails, naming the file and line, at a boost::asio post/dispatch/defer,
// std::thread or std::async whose work is not wrapped in Guarded(...) or GuardedRun(...), unless
// the short list below allows it with a reason. An unguarded exception on such a thread ends
// adaptd (std::terminate), with every sandbox unmanaged.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace adapt {
namespace {

namespace fs = std::filesystem;

struct Allowed {
  std::string path;  // relative to src/; a folder when it ends in '/'
  std::string what;  // the post's first argument, or "" for any site in the path
  std::string why;
};

const std::vector<Allowed>& AllowList() {
  static const std::vector<Allowed> allowed = {
      {"cli/", "", "the adapt CLI is a program of its own, not adaptd"},
      {"core/sandbox_service_fixture.h", "", "a unit tests' fixture"},
      {"image/fake_registry_test_support.h", "", "the image unit tests' fake registry"},
      {"api/http_connection.cc", "strand", "the HTTP server's I/O threads run under GuardedRun"},
      {"api/http_connection.cc", "strand_", "the HTTP server's I/O threads run under GuardedRun"},
      {"api/http_connection_internal.h", "strand_",
       "the HTTP server's I/O threads run under GuardedRun"},
      {"api/http_request_body.cc", "strand_", "the HTTP server's I/O threads run under GuardedRun"},
      {"api/http_response_stream.cc", "strand_",
       "the HTTP server's I/O threads run under GuardedRun"},
      {"api/http_server.cc", "acceptor_.get_executor()",
       "the HTTP server's I/O threads run under GuardedRun"},
      {"net/session_eviction.h", "executor",
       "the ingress's and the proxies' I/O threads run under GuardedRun"},
      {"core/network_beside_launch.cc", "std::async",
       "an exception is kept in the future and thrown where it is read, on a guarded worker"},
  };
  return allowed;
}

bool IsAllowed(const std::string& path, std::string what) {
  if (what.rfind('*', 0) == 0) what.erase(0, 1);  // an executor held in an optional
  for (const auto& a : AllowList()) {
    bool in_path = a.path.back() == '/' ? path.rfind(a.path, 0) == 0 : path == a.path;
    if (in_path && (a.what.empty() || a.what == what)) return true;
  }
  return false;
}

struct Site {
  size_t line;
  std::string what;
  bool guarded;
};

size_t LineOf(const std::string& text, size_t offset) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
}

bool InComment(const std::string& text, size_t offset) {
  size_t line_start = text.rfind('\n', offset);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  return text.substr(line_start, offset - line_start).find("//") != std::string::npos;
}

// The background-work sites of one source file's text.
std::vector<Site> SitesIn(const std::string& text) {
  static const std::regex kGuard(R"(^\s*(?:adapt::)?Guarded(?:Run)?\()");
  static const std::regex kPost(R"(\b(?:asio|net)::(?:post|dispatch|defer)\(\s*([^,;]*?)\s*,)");
  static const std::regex kThread(R"(\bstd::j?thread(?:\s+\w+)?\s*[({])");
  static const std::regex kAsync(R"(\bstd::async\s*\()");
  static const std::regex kEmplace(R"(\.emplace_back\()");
  std::vector<Site> sites;
  auto scan = [&](const std::regex& re, bool has_what, const std::string& fixed_what) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it) {
      size_t at = static_cast<size_t>(it->position(0));
      if (InComment(text, at)) continue;
      size_t after = at + static_cast<size_t>(it->length(0));
      std::string rest = text.substr(after, 200);
      sites.push_back({LineOf(text, at), has_what ? (*it)[1].str() : fixed_what,
                       std::regex_search(rest, kGuard, std::regex_constants::match_continuous)});
    }
  };
  scan(kPost, true, "");
  scan(kThread, false, "std::thread");
  scan(kAsync, false, "std::async");
  // Threads kept in a vector start with emplace_back.
  if (text.find("std::vector<std::thread>") != std::string::npos)
    scan(kEmplace, false, "std::thread");
  return sites;
}

TEST(BackgroundSites, TheScanFindsUnguardedSitesAndAcceptsGuardedOnes) {
  auto sites = SitesIn(
      "boost::asio::post(workers_, [this] { Run(); });\n"
      "boost::asio::post(workers_, Guarded(\"x\", [this] { Run(); }));\n"
      "thread_ = std::thread([this] { Loop(); });\n"
      "std::thread waiter(Guarded(\"w\", [c] { Wait(c); }));\n"
      "  // boost::asio::post(pool, [] {}); in a comment\n"
      "std::vector<std::thread> threads_;\n"
      "threads_.emplace_back(GuardedRun(\"io\", ioc_));\n"
      "threads_.emplace_back([this] { ioc_.run(); });\n"
      "auto f = std::async(std::launch::async, [] {});\n");
  ASSERT_EQ(sites.size(), 7u);
  EXPECT_FALSE(sites[0].guarded);
  EXPECT_EQ(sites[0].what, "workers_");
  EXPECT_EQ(sites[0].line, 1u);
  EXPECT_TRUE(sites[1].guarded);
  EXPECT_FALSE(sites[2].guarded);
  EXPECT_TRUE(sites[3].guarded);
  EXPECT_EQ(sites[4].what, "std::async");
  EXPECT_FALSE(sites[4].guarded);
  EXPECT_TRUE(sites[5].guarded);
  EXPECT_FALSE(sites[6].guarded);
  EXPECT_EQ(sites[6].line, 8u);
}

TEST(BackgroundSites, EveryThreadAndPostOfAdaptdRunsGuarded) {
  const fs::path root = ADAPT_SOURCE_DIR;
  ASSERT_TRUE(fs::is_directory(root)) << root;
  size_t files = 0, guarded = 0;
  std::vector<std::string> unguarded;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    if (name.ends_with("_test.cc")) continue;
    const std::string path = fs::relative(entry.path(), root).generic_string();
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    ++files;
    for (const Site& s : SitesIn(text.str())) {
      if (s.guarded) {
        ++guarded;
      } else if (!IsAllowed(path, s.what)) {
        unguarded.push_back("src/" + path + ":" + std::to_string(s.line) + ": " + s.what);
      }
    }
  }
  EXPECT_GT(files, 100u);
  EXPECT_GT(guarded, 50u);  // the scan still finds the guarded sites
  std::string list;
  for (const auto& u : unguarded) list += "  " + u + "\n";
  EXPECT_TRUE(unguarded.empty())
      << "background work that does not run under Guarded/GuardedRun "
         "(src/base/background_work.h), whose exception would end adaptd:\n"
      << list << "wrap it, or allow it in src/base/background_sites_test.cc with a reason";
}

}  // namespace
}  // namespace adapt
