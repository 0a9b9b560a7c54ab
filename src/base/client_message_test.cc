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

TEST(ClientMessageTest, ARecordedFailureKeepsItsMessageUnlessItNamesAHostDirectory) {
  SetHostDirectoriesForMessages({"/var/lib/adapt/", "/srv/images"});
  Status reason(Code::kInternal, "the startup command python4 was not found");
  EXPECT_EQ(RecordMessage(reason), reason.message());
  for (const char* message :
       {"runsc: reading /var/lib/adapt/sandboxes/sbx_a/config.json failed",
        "no such directory /var/lib/adapt", "layer /srv/images/python/rootfs is not readable"}) {
    std::string said = RecordMessage(Status(Code::kInternal, message));
    EXPECT_EQ(said.find("/var/lib"), std::string::npos) << said;
    EXPECT_EQ(said.find("/srv"), std::string::npos) << said;
    EXPECT_NE(said.find("(reference err_"), std::string::npos) << said;
  }
  // A client sentence still wins, with its reference.
  Status full = Status(Code::kUnavailable, "dialing /var/lib/adapt/agent.sock: refused")
                    .WithClientMessage("the sandbox's agent did not answer");
  EXPECT_EQ(RecordMessage(full).rfind("the sandbox's agent did not answer (reference err_", 0), 0u);
  // "/" alone names every path: it is not taken.
  SetHostDirectoriesForMessages({"/", ""});
  EXPECT_EQ(RecordMessage(Status(Code::kInternal, "/bin/sh: not found")), "/bin/sh: not found");
  SetHostDirectoriesForMessages({});
}

}  // namespace
}  // namespace adapt
