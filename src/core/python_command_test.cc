#include "core/python_command.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

TEST(PythonCommand, FeedsTheCodeToPython3OnStdin) {
  auto command = PythonCommand({"print(1)", 30, 5});
  ASSERT_TRUE(command.ok()) << command.status().message();
  ASSERT_EQ(command->argv.size(), 3u);
  EXPECT_EQ(command->argv[0], "/bin/sh");
  EXPECT_NE(command->argv[2].find("exec python3 -"), std::string::npos);
  EXPECT_EQ(command->stdin_data, "print(1)");
  EXPECT_EQ(command->timeout_seconds, 30);
  EXPECT_EQ(command->wait_seconds, 5);
}

TEST(PythonCommand, ErrorsNameTheCoreFields) {
  EXPECT_EQ(PythonCommand({"", 30, 5}).status().field(), "code");
  EXPECT_EQ(PythonCommand({std::string("a\0b", 3), 30, 5}).status().field(), "code");
  EXPECT_EQ(PythonCommand({"x", 0, 5}).status().field(), "timeout_seconds");
  EXPECT_EQ(PythonCommand({"x", 30, 61}).status().field(), "wait_seconds");
}

TEST(PythonMissing, OnlyAPythonRunThatFoundNoPython3) {
  auto command = PythonCommand({"print(1)", 30, 5});
  ASSERT_TRUE(command.ok());
  Command missing;
  missing.argv = command->argv;
  missing.status = "exited";
  missing.exit_code = 127;
  missing.stderr_text = "adapt: python3 is not installed in this image\n";
  EXPECT_TRUE(PythonMissing(missing));
  Command failed = missing;
  failed.exit_code = 1;
  EXPECT_FALSE(PythonMissing(failed));
  Command other = missing;
  other.argv = {"/bin/sh", "-c", "exit 127"};
  EXPECT_FALSE(PythonMissing(other));
  Command running = missing;
  running.status = "running";
  running.exit_code.reset();
  EXPECT_FALSE(PythonMissing(running));
}

}  // namespace
}  // namespace adapt::core
