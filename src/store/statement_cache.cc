#include "store/statement_cache.h"

#include <utility>

namespace adapt::store {

StatementCache::Lease::Lease(SQLite::Statement* kept, bool* lent,
                             std::unique_ptr<SQLite::Statement> own)
    : statement_(own ? own.get() : kept), lent_(lent), own_(std::move(own)) {}

StatementCache::Lease::Lease(Lease&& other) noexcept
    : statement_(other.statement_), lent_(other.lent_), own_(std::move(other.own_)) {
  other.statement_ = nullptr;
  other.lent_ = nullptr;
}

StatementCache::Lease::~Lease() {
  if (!lent_) return;  // an own statement is finalized with own_; a moved-from lease holds none
  try {
    statement_->reset();
  } catch (...) {
    // reset reports the last step's error again; the statement is reset all the same.
  }
  try {
    statement_->clearBindings();
  } catch (...) {
  }
  *lent_ = false;
}

StatementCache::Lease StatementCache::Get(const std::string& sql) {
  auto it = kept_.find(sql);
  if (it == kept_.end() && kept_.size() < kMaxKept) {
    Kept fresh{std::make_unique<SQLite::Statement>(db_, sql), false};
    it = kept_.emplace(sql, std::move(fresh)).first;
  }
  if (it == kept_.end() || it->second.lent)
    return Lease(nullptr, nullptr, std::make_unique<SQLite::Statement>(db_, sql));
  it->second.lent = true;
  return Lease(it->second.statement.get(), &it->second.lent, nullptr);
}

}  // namespace adapt::store
