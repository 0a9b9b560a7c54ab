// One SQLite transaction of a store method, which may run inside another's: the first opens
// the transaction, one inside it is a savepoint of it (IdempotencyStore::CreateOnce runs a
// create's own method inside the transaction that records its key). SQLite's BEGIN cannot
// nest; SAVEPOINT can, and outside a transaction it begins one (deferred, as BEGIN does).
// Private to src/store.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

namespace adapt::store {

class StoreTransaction {
 public:
  explicit StoreTransaction(SQLite::Database& db) : db_(db) { db_.exec("SAVEPOINT store_tx"); }
  StoreTransaction(const StoreTransaction&) = delete;
  StoreTransaction& operator=(const StoreTransaction&) = delete;
  // Undoes what was written since the constructor unless commit() ran. Never throws.
  ~StoreTransaction() {
    if (committed_) return;
    try {
      db_.exec("ROLLBACK TO store_tx");
      db_.exec("RELEASE store_tx");
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
  }
  // Keeps what was written: commits the transaction, or, inside another, folds this part into
  // it (the outer one's rollback still undoes it). Throws on failure, as SQLite::Transaction.
  void commit() {
    db_.exec("RELEASE store_tx");
    committed_ = true;
  }

 private:
  SQLite::Database& db_;
  bool committed_ = false;
};

}  // namespace adapt::store
