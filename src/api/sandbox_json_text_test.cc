// The sandbox written as text (GET /v1/sandboxes/{id} and the list) is byte for byte the JSON
// that SandboxToJson's tree gives through JsonResponse, for every shape a sandbox takes.
#include "api/sandbox_json_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "api/errors.h"
#include "api/sandbox_json.h"

namespace adapt::api {
namespace {

std::string TreeText(const core::Sandbox& s) { return JsonResponse(200, SandboxToJson(s)).body; }

std::string TreeText(const core::SandboxPage& p) {
  return JsonResponse(200, SandboxPageToJson(p)).body;
}

// Texts that reach every escaping rule: quotes, backslashes, control characters, DEL,
// UTF-8 of two to four bytes, and bytes that are not UTF-8 (nlohmann replaces them).
const std::vector<std::string> kTexts = {"",
                                         "worker",
                                         "a\"b",
                                         "back\\slash",
                                         "tab\there",
                                         "line\nfeed",
                                         "\x01\x1f",
                                         "del\x7f",
                                         "caf\xc3\xa9",
                                         "\xe2\x82\xac euro",
                                         "\xf0\x9f\x98\x80",
                                         "bad\xff",
                                         "cut\xe2\x82",
                                         "</script>",
                                         "sbx_abcdefghijklmnopqrst",
                                         "a/b",
                                         "\r\b\f",
                                         "\xc3(",
                                         "mixed\"\xc3\xa9\\\n"};

class Shapes {
 public:
  explicit Shapes(unsigned seed) : rng_(seed) {}

  core::Sandbox Next() {
    core::Sandbox s;
    s.id = Text();
    s.status = Text();
    s.created_at = Millis();
    s.updated_at = Millis();
    if (Coin()) s.expires_at = Millis();
    if (Coin()) s.deleted_at = Millis();
    core::SandboxConfig& c = s.config;
    c.cpu = static_cast<int>(Int(-3, 64));
    c.memory_mib = Int(-1, 1LL << 40);
    c.disk_mib = Int(0, 1LL << 20);
    if (Coin()) c.ttl_seconds = Int(-5, 1LL << 33);
    if (Coin()) c.idle_timeout_seconds = Int(0, 86400);
    for (int i = Int(0, 4); i > 0; --i) c.labels[Text()] = Text();
    c.image = Text();
    if (Coin()) c.image_id = Text();
    c.network.egress = Text();
    for (int i = Int(0, 2); i > 0; --i)
      c.network.allow.push_back({Text(), Text(), static_cast<int>(Int(0, 65535))});
    if (Coin()) c.network.dns = Text();
    for (int i = Int(0, 2); i > 0; --i)
      c.network.hostnames.push_back({Text(), static_cast<int>(Int(0, 65535))});
    c.security_profile = Text();
    c.startup_class = Text();
    if (Coin()) c.storage = Text();
    for (int i = Int(0, 3); i > 0; --i) c.secrets.push_back({Text(), Int(0, 9)});
    if (Coin()) c.pool = store::PoolUseConfig{Coin(), Text()};
    if (Coin()) s.termination_reason = Text();
    if (Coin()) s.error = Text();
    for (int i = Int(0, 2); i > 0; --i)
      s.endpoints.push_back(
          {Text(), Text(), static_cast<int>(Int(1, 65535)), Text(), Text(), Text(), Millis()});
    if (Coin()) {
      core::HibernationSummary h;
      h.stopped_at = Millis();
      h.workspace = Text();
      h.processes = Text();
      if (Coin()) h.note = Text();
      s.hibernation = h;
    }
    for (int i = Int(0, 3); i > 0; --i) {
      core::EnvironmentSource e{Text(), Text(), std::nullopt};
      if (Coin()) e.version = Int(0, 100);
      s.environment.push_back(e);
    }
    if (Coin()) {
      core::StartupView& v = s.startup.emplace();
      v.settings.mode = Text();
      if (Coin()) v.settings.argv = Texts();
      if (Coin()) v.settings.args = Texts();
      if (Coin()) v.settings.entrypoint = Texts();
      if (Coin()) v.settings.cwd = Text();
      if (Coin()) v.settings.user = Text();
      if (Coin()) v.exit_code = Int(-1, 255);
      if (Coin()) v.signal = Text();
      if (Coin()) v.error = Text();
      if (Coin()) v.started_at = Text();
      if (Coin()) v.finished_at = Text();
      v.stdout_text = Text();
      v.stderr_text = Text();
      v.truncated = Coin();
    }
    return s;
  }

 private:
  bool Coin() { return Int(0, 1) == 1; }
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  int64_t Millis() { return Int(0, 4102444800000); }  // to 2100
  std::string Text() {
    std::string out = kTexts[Int(0, kTexts.size() - 1)];
    if (Coin()) out += kTexts[Int(0, kTexts.size() - 1)];
    return out;
  }
  std::vector<std::string> Texts() {
    std::vector<std::string> out;
    for (int i = Int(0, 3); i > 0; --i) out.push_back(Text());
    return out;
  }
  std::mt19937_64 rng_;
};

TEST(SandboxJsonText, DefaultSandboxIsTheTreesText) {
  core::Sandbox s;
  EXPECT_EQ(SandboxJsonText(s), TreeText(s));
}

TEST(SandboxJsonText, EveryShapeIsTheTreesText) {
  Shapes shapes(20261202);
  for (int i = 0; i < 2000; ++i) {
    core::Sandbox s = shapes.Next();
    ASSERT_EQ(SandboxJsonText(s), TreeText(s)) << "shape " << i;
  }
}

TEST(SandboxJsonText, PagesAreTheTreesText) {
  Shapes shapes(7);
  core::SandboxPage page;
  EXPECT_EQ(SandboxPageJsonText(page), TreeText(page));
  for (int i = 0; i < 20; ++i) {
    page.items.push_back(shapes.Next());
    page.next_cursor = i % 2 ? std::optional<std::string>("c" + std::to_string(i)) : std::nullopt;
    ASSERT_EQ(SandboxPageJsonText(page), TreeText(page)) << "page of " << i + 1;
  }
}

// A label or output that is not UTF-8 is answered with U+FFFD in its place, as before.
TEST(SandboxJsonText, InvalidUtf8IsReplacedAsBefore) {
  core::Sandbox s;
  s.config.labels["na\xffme"] = "v\xe2\x82";
  std::string text = SandboxJsonText(s);
  EXPECT_EQ(text, TreeText(s));
  EXPECT_NE(text.find("\"na\xef\xbf\xbdme\":\"v\xef\xbf\xbd\""), std::string::npos) << text;
}

}  // namespace
}  // namespace adapt::api
