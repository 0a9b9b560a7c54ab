#include "base/client_message.h"

#include <gtest/gtest.h>

namespace adapt {
namespace {

TEST(ClientMessageTest, KeepsTheMessageOfAClientsMistake) {
  EXPECT_EQ(ClientMessage(Status(Code::kInvalidArgument, "cpu must be 1-32")), "cpu must be 1-32");
  EXPECT_EQ(ClientMessage(Status(Code::kNotFound, "sandbox sbx_a was not found")),
            "sandbox sbx_a was not found");
}

TEST(ClientMessageTest, AnInternalFailureGivesAReferenceNeverItsMessage) {
  std::string said = ClientMessage(Status(Code::kInternal, "writing /var/lib/adapt/x failed"));
  EXPECT_EQ(said.find("/var/lib"), std::string::npos) << said;
  EXPECT_NE(said.find("(reference err_"), std::string::npos) << said;
  // Each failure its own reference, so the log line is found.
  EXPECT_NE(said, ClientMessage(Status(Code::kInternal, "writing /var/lib/adapt/x failed")));
}

TEST(ClientMessageTest, AFailureNamingTheHostsResourcesGivesItsClientSentenceAndAReference) {
  Status full = Status(Code::kResourceExhausted, "writing /var/lib/adapt/x: No space left")
                    .WithClientMessage("the server's disk is full");
  std::string said = ClientMessage(full.WithContext("saving /var/lib/adapt/y"));
  EXPECT_EQ(said.find("/var/lib"), std::string::npos) << said;
  EXPECT_EQ(said.rfind("the server's disk is full (reference err_", 0), 0u) << said;
}

}  // namespace
}  // namespace adapt
