// Prepared statements kept for reuse on one SQLite connection. On the API's hot reads (a
// request's key, organization and sandbox lookups) preparing the statement was a quarter of
// adaptd's CPU (bench/README.md, "api": a profile of GET /v1/sandboxes/{id}); a kept one is
// only reset and bound again. Not thread-safe: the store's lock guards it, as it does the
// connection.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <string>
#include <unordered_map>

namespace adapt::store {

class StatementCache {
 public:
  // A statement lent by the cache: reset and unbound when the lease ends, so that it holds no
  // read transaction open between calls. A statement already lent (the same SQL used again
  // while a lease is alive) is not shared: the second lease gets a statement of its own.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    SQLite::Statement& operator*() { return *statement_; }
    SQLite::Statement* operator->() { return statement_; }

   private:
    friend class StatementCache;
    Lease(SQLite::Statement* kept, bool* lent, std::unique_ptr<SQLite::Statement> own);
    SQLite::Statement* statement_;
    bool* lent_;                              // the kept statement's flag; null for an own one
    std::unique_ptr<SQLite::Statement> own_;  // set when the kept one was lent already
  };

  explicit StatementCache(SQLite::Database& db) : db_(db) {}
  // Prepares `sql` the first time; at most kMaxKept statements are kept (past that, each
  // lease prepares its own), so SQL built from varying text cannot grow the cache forever.
  Lease Get(const std::string& sql);
  size_t kept() const { return kept_.size(); }

  static constexpr size_t kMaxKept = 64;

 private:
  struct Kept {
    std::unique_ptr<SQLite::Statement> statement;
    bool lent = false;
  };
  SQLite::Database& db_;
  std::unordered_map<std::string, Kept> kept_;
};

}  // namespace adapt::store
