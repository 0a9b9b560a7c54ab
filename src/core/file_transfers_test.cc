// FileTransfers: the count a checkpoint waits on, and the cancel a stop sends.
#include "core/file_transfers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace adapt::core {
namespace {

using std::chrono::milliseconds;

TEST(FileTransfersTest, CountsEachSandboxsOperationsWhileTheirHoldsLive) {
  FileTransfers transfers;
  {
    FileTransfers::Hold a = transfers.Begin("sbx_a");
    FileTransfers::Hold moved = std::move(a);
    FileTransfers::Hold b = transfers.Begin("sbx_a");
    EXPECT_EQ(transfers.InFlight("sbx_a"), 2);
    EXPECT_EQ(transfers.InFlight("sbx_b"), 0);
    EXPECT_FALSE(transfers.AwaitNone("sbx_a", milliseconds(0)));
    EXPECT_TRUE(transfers.AwaitNone("sbx_b", milliseconds(0)));
  }
  EXPECT_TRUE(transfers.AwaitNone("sbx_a", milliseconds(0)));
}

TEST(FileTransfersTest, CancelReachesThatSandboxsOperationsAndSaysWhetherEachEnded) {
  FileTransfers transfers;
  EXPECT_TRUE(transfers.Cancel("sbx_a", milliseconds(10)));  // none in flight
  FileTransfers::Hold ends = transfers.Begin("sbx_a");
  FileTransfers::Hold other = transfers.Begin("sbx_b");
  int asked = 0, asked_other = 0;
  ends.OnCancel([&](milliseconds) { return ++asked > 0; });
  other.OnCancel([&](milliseconds) { return ++asked_other > 0; });
  EXPECT_TRUE(transfers.Cancel("sbx_a", milliseconds(10)));
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(asked_other, 0);
  // One whose end is not seen, and one not started (no canceller yet), are not known ended.
  FileTransfers::Hold unseen = transfers.Begin("sbx_a");
  unseen.OnCancel([](milliseconds) { return false; });
  EXPECT_FALSE(transfers.Cancel("sbx_a", milliseconds(10)));
  unseen = FileTransfers::Hold();
  FileTransfers::Hold starting = transfers.Begin("sbx_a");
  EXPECT_FALSE(transfers.Cancel("sbx_a", milliseconds(10)));
  EXPECT_EQ(asked, 3);
  // A cleared canceller is not called.
  ends.OnCancel(nullptr);
  starting = FileTransfers::Hold();
  EXPECT_FALSE(transfers.Cancel("sbx_a", milliseconds(10)));
  EXPECT_EQ(asked, 3);
}

TEST(FileTransfersTest, ClearingTheCancellerWaitsForACancelUnderWay) {
  // What the canceller reaches is destroyed after it is cleared: never while it runs.
  FileTransfers transfers;
  FileTransfers::Hold hold = transfers.Begin("sbx_a");
  std::atomic<bool> inside{false}, release{false}, done{false};
  hold.OnCancel([&](milliseconds) {
    inside = true;
    while (!release) std::this_thread::sleep_for(milliseconds(1));
    done = true;
    return true;
  });
  std::thread stop([&] { transfers.Cancel("sbx_a", milliseconds(1000)); });
  while (!inside) std::this_thread::sleep_for(milliseconds(1));
  std::thread clear([&] {
    hold.OnCancel(nullptr);
    EXPECT_TRUE(done);
  });
  std::this_thread::sleep_for(milliseconds(20));
  release = true;
  clear.join();
  stop.join();
}

}  // namespace
}  // namespace adapt::core
