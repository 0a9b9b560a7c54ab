// The set-up the object store's tests share: a real ObjectStore over a SQLite store in a
// temporary directory (dir_), and an ObjectSource over a string.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "os/temp_dir.h"
#include "storage/object_store.h"
#include "store/store.h"

namespace adapt::storage::testing_support {

inline ObjectSource FromString(const std::string& s) {
  auto off = std::make_shared<size_t>(0);
  return [s, off](char* buf, size_t n) -> long {
    size_t take = std::min(n, s.size() - *off);
    std::copy_n(s.data() + *off, take, buf);
    *off += take;
    return static_cast<long>(take);
  };
}

class ObjectStoreFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenSqliteStore(dir_ + "/db");
    ASSERT_TRUE(s.ok());
    store_ = std::move(*s);
    objects_ = std::make_unique<ObjectStore>(*store_, dir_ + "/objects");
    ASSERT_TRUE(objects_->Init().ok());
  }

  os::TempDir tmp_{"objects"};
  const std::string dir_ = tmp_.path();
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<ObjectStore> objects_;
};

}  // namespace adapt::storage::testing_support
