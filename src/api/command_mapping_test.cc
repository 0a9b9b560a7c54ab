#include "api/command_mapping.h"

#include <gtest/gtest.h>

namespace adapt::api {
namespace {

using nlohmann::json;

TEST(ParseRunPython, FillsTheDefaults) {
  auto req = ParseRunPython({{"code", "print(1)"}});
  ASSERT_TRUE(req.ok()) << req.status().message();
  EXPECT_EQ(req->code, "print(1)");
  EXPECT_EQ(req->timeout_seconds, 600);
  EXPECT_EQ(req->wait_seconds, 10);
}

TEST(ParseRunPython, ErrorsNameTheRestFields) {
  struct Case {
    json body;
    std::string field;
  } cases[] = {
      {json::array(), ""},
      {json::object(), "code"},
      {{{"code", 3}}, "code"},
      {{{"code", "x"}, {"timeoutSeconds", 0}}, "timeoutSeconds"},
      {{{"code", "x"}, {"timeoutSeconds", "5"}}, "timeoutSeconds"},
      {{{"code", "x"}, {"waitSeconds", 61}}, "waitSeconds"},
      {{{"code", "x"}, {"stdin", "y"}}, "stdin"},
  };
  for (const auto& c : cases) {
    auto req = ParseRunPython(c.body);
    ASSERT_FALSE(req.ok()) << c.body.dump();
    EXPECT_EQ(req.status().code(), Code::kInvalidArgument) << c.body.dump();
    EXPECT_EQ(req.status().field(), c.field) << c.body.dump();
  }
}

}  // namespace
}  // namespace adapt::api
