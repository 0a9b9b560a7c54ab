// SqliteStore: OAuth clients and grants (codes, access and refresh tokens) of the MCP authorization
// server.
#include <nlohmann/json.hpp>

#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {

using nlohmann::json;

Status SqliteStore::CreateOAuthClient(const OAuthClientRecord& c) {
  return Guard("registering OAuth client", [&]() -> Status {
    SQLite::Statement q(db_,
                        "INSERT INTO oauth_clients (id, name, redirect_uris, created_at) "
                        "VALUES (?, ?, ?, ?)");
    q.bind(1, c.id);
    q.bind(2, c.name);
    q.bind(3, nlohmann::json(c.redirect_uris)
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    q.bind(4, c.created_at);
    q.exec();
    return Status::Ok();
  });
}

Result<OAuthClientRecord> SqliteStore::GetOAuthClient(const std::string& id) {
  return Guard<Result<OAuthClientRecord>>(
      "reading OAuth client", [&]() -> Result<OAuthClientRecord> {
        SQLite::Statement q(
            db_, "SELECT id, name, redirect_uris, created_at FROM oauth_clients WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep()) return NotFound("unknown OAuth client " + id);
        OAuthClientRecord c;
        c.id = q.getColumn(0).getString();
        c.name = q.getColumn(1).getString();
        c.redirect_uris =
            nlohmann::json::parse(q.getColumn(2).getString()).get<std::vector<std::string>>();
        c.created_at = q.getColumn(3).getInt64();
        return c;
      });
}

Result<int64_t> SqliteStore::PruneOAuthClients(int64_t registered_before, int64_t now) {
  return Guard<Result<int64_t>>("forgetting unused OAuth clients", [&]() -> Result<int64_t> {
    StoreTransaction tx(db_);
    SQLite::Statement purge(db_, "DELETE FROM oauth_grants WHERE expires_at <= ?");
    purge.bind(1, now);
    purge.exec();
    SQLite::Statement q(db_,
                        "DELETE FROM oauth_clients WHERE created_at < ? AND id NOT IN "
                        "(SELECT client_id FROM oauth_grants)");
    q.bind(1, registered_before);
    q.exec();
    SQLite::Statement count(db_, "SELECT COUNT(*) FROM oauth_clients");
    count.executeStep();
    int64_t left = count.getColumn(0).getInt64();
    tx.commit();
    return left;
  });
}

Status SqliteStore::PutOAuthGrant(const OAuthGrantRecord& g, size_t max_clients_of_org) {
  return Guard("storing OAuth grant", [&]() -> Status {
    StoreTransaction tx(db_);
    // Expired grants are useless: drop them while here.
    SQLite::Statement purge(db_, "DELETE FROM oauth_grants WHERE expires_at < ?");
    purge.bind(1, g.created_at);
    purge.exec();
    SQLite::Statement q(db_,
                        "INSERT INTO oauth_grants (hash, kind, client_id, org_id, key_id, data, "
                        "expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    q.bind(1, g.hash);
    q.bind(2, g.kind);
    q.bind(3, g.client_id);
    q.bind(4, g.org_id);
    q.bind(5, g.key_id);
    // The `data` column is a JSON object, as earlier versions wrote it.
    nlohmann::json data = nlohmann::json::object();
    if (!g.redirect_uri.empty()) data["redirect_uri"] = g.redirect_uri;
    if (!g.code_challenge.empty()) data["code_challenge"] = g.code_challenge;
    data["resource"] = g.resource;
    q.bind(6, data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    q.bind(7, g.expires_at);
    q.bind(8, g.created_at);
    q.exec();
    if (max_clients_of_org > 0) {
      SQLite::Statement trim(
          db_,
          "DELETE FROM oauth_grants WHERE org_id = ?1 AND client_id IN (SELECT client_id FROM "
          "oauth_grants WHERE org_id = ?1 AND client_id != ?2 GROUP BY client_id ORDER BY "
          "MAX(created_at) DESC, client_id LIMIT -1 OFFSET ?3)");
      trim.bind(1, g.org_id);
      trim.bind(2, g.client_id);
      trim.bind(3, static_cast<int64_t>(max_clients_of_org - 1));
      trim.exec();
    }
    tx.commit();
    return Status::Ok();
  });
}

Result<OAuthGrantRecord> SqliteStore::FindOAuthGrant(const std::string& hash,
                                                     const std::string& kind, int64_t now) {
  return Guard<Result<OAuthGrantRecord>>("reading OAuth grant",
                                         [&] { return ReadGrantLocked(hash, kind, now); });
}

Result<OAuthGrantRecord> SqliteStore::TakeOAuthGrant(const std::string& hash,
                                                     const std::string& kind, int64_t now) {
  return Guard<Result<OAuthGrantRecord>>("using OAuth grant", [&]() -> Result<OAuthGrantRecord> {
    StoreTransaction tx(db_);
    auto grant = ReadGrantLocked(hash, kind, now);
    if (!grant.ok()) return grant;
    SQLite::Statement del(db_, "DELETE FROM oauth_grants WHERE hash = ?");
    del.bind(1, hash);
    del.exec();
    tx.commit();
    return grant;
  });
}

Result<OAuthGrantRecord> SqliteStore::ReadGrantLocked(const std::string& hash,
                                                      const std::string& kind, int64_t now) {
  SQLite::Statement q(db_,
                      "SELECT hash, kind, client_id, org_id, key_id, data, expires_at, "
                      "created_at FROM oauth_grants WHERE hash = ? AND kind = ? AND "
                      "expires_at > ?");
  q.bind(1, hash);
  q.bind(2, kind);
  q.bind(3, now);
  if (!q.executeStep()) return NotFound("unknown or expired OAuth " + kind);
  OAuthGrantRecord g;
  g.hash = q.getColumn(0).getString();
  g.kind = q.getColumn(1).getString();
  g.client_id = q.getColumn(2).getString();
  g.org_id = q.getColumn(3).getString();
  g.key_id = q.getColumn(4).getString();
  auto data = nlohmann::json::parse(q.getColumn(5).getString(), nullptr, false);
  auto text = [&](const char* key) {
    return data.is_object() && data.contains(key) && data[key].is_string()
               ? data[key].get<std::string>()
               : std::string();
  };
  g.redirect_uri = text("redirect_uri");
  g.code_challenge = text("code_challenge");
  g.resource = text("resource");
  g.expires_at = q.getColumn(6).getInt64();
  g.created_at = q.getColumn(7).getInt64();
  return g;
}

}  // namespace adapt::store
