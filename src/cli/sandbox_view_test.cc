#include "cli/sandbox_view.h"

#include <gtest/gtest.h>

namespace adapt::cli {
namespace {

using nlohmann::json;

const json kSandboxRecord = json::parse(R"J({
  "id": "sbx_1", "status": "completed", "createdAt": "2025-01-01T00:00:00Z", "expiresAt": null,
  "cpu": 2, "memoryMiB": 4096, "diskMiB": 8192, "ttlSeconds": null,
  "labels": {"name": "research-worker", "project": "research"},
  "image": "python:3.12-slim", "imageId": null, "network": {"egress": "none"},
  "startup": {"mode": "command", "argv": ["python", "-c", "print('hello')"], "exitCode": 0,
              "signal": null, "error": null, "stdout": "hello\n", "stderr": "", "truncated": false},
  "terminationReason": "completed"})J");

TEST(SandboxTableRow, ShowsTheListColumns) {
  EXPECT_EQ(SandboxTableRow(kSandboxRecord),
            TableRow({"sbx_1", "completed", "python:3.12-slim", "2", "4096MiB", "research-worker",
                      "2025-01-01T00:00:00Z"}));
  EXPECT_EQ(SandboxTableRow(json::object()).size(), SandboxTableHeader().size());
}

TEST(DescribeSandbox, ListsFieldsAndStartupOutput) {
  EXPECT_EQ(DescribeSandbox(kSandboxRecord),
            "id:                 sbx_1\n"
            "status:             completed\n"
            "image:              python:3.12-slim\n"
            "cpu:                2\n"
            "memoryMiB:          4096\n"
            "diskMiB:            8192\n"
            "ttlSeconds:         none\n"
            "createdAt:          2025-01-01T00:00:00Z\n"
            "expiresAt:          never\n"
            "labels:             name=research-worker, project=research\n"
            "egress:             none\n"
            "startup:            command: python -c \"print('hello')\"\n"
            "exitCode:           0\n"
            "terminationReason:  completed\n"
            "stdout:\n"
            "  hello\n");
}

TEST(DescribeSandbox, ToleratesUnexpectedShapes) {
  EXPECT_NO_THROW(DescribeSandbox(json::array()));
  EXPECT_NO_THROW(DescribeSandbox(json::parse(R"({"startup":5,"labels":[1],"cpu":"x"})")));
}

}  // namespace
}  // namespace adapt::cli
