#include "core/command_request.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

RunCommandRequest Echo() {
  RunCommandRequest r;
  r.argv = {"echo", "hi"};
  return r;
}

TEST(ValidateRunCommand, TheDefaultsOfARequestWithAProgramAreValid) {
  EXPECT_TRUE(ValidateRunCommand(Echo()).ok());
}

TEST(ValidateRunCommand, ErrorsNameTheCoreFields) {
  auto field = [](auto change) {
    RunCommandRequest r = Echo();
    change(r);
    return ValidateRunCommand(r).field();
  };
  EXPECT_EQ(field([](RunCommandRequest& r) { r.argv.clear(); }), "argv");
  EXPECT_EQ(field([](RunCommandRequest& r) { r.argv = {""}; }), "argv");
  EXPECT_EQ(field([](RunCommandRequest& r) { r.argv = {std::string(129 * 1024, 'a')}; }), "argv");
  EXPECT_EQ(field([](RunCommandRequest& r) { r.cwd = "tmp"; }), "cwd");
  EXPECT_EQ(field([](RunCommandRequest& r) { r.env["1A"] = "x"; }), "env");
  EXPECT_EQ(field([](RunCommandRequest& r) { r.stdin_data = std::string("a\0b", 3); }), "stdin");
  EXPECT_EQ(field([](RunCommandRequest& r) { r.timeout_seconds = 0; }), "timeout_seconds");
  EXPECT_EQ(field([](RunCommandRequest& r) { r.wait_seconds = 61; }), "wait_seconds");
}

}  // namespace
}  // namespace adapt::core
