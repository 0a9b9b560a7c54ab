// SqliteStore: Sandbox networks and the endpoints exposed on them.
#include "store/network_data_codec.h"
#include "store/sandbox_limit_check.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {

Status SqliteStore::PutNetwork(const NetworkRecord& n) {
  return Guard("recording a sandbox network", [&]() -> Status {
    SQLite::Statement exists(db_,
                             "SELECT 1 FROM sandbox_networks WHERE sandbox_id = ? OR slot = ?");
    exists.bind(1, n.sandbox_id);
    exists.bind(2, n.slot);
    if (exists.executeStep())
      return Conflict("network slot " + std::to_string(n.slot) + " or sandbox " + n.sandbox_id +
                      " is taken");
    SQLite::Statement q(
        db_, "INSERT INTO sandbox_networks(sandbox_id, slot, data, created_at) VALUES (?,?,?,?)");
    q.bind(1, n.sandbox_id);
    q.bind(2, n.slot);
    q.bind(3, EncodeNetworkData(n));
    q.bind(4, n.created_at);
    q.exec();
    return Status::Ok();
  });
}

Result<std::vector<NetworkRecord>> SqliteStore::ListNetworks() {
  return Guard<Result<std::vector<NetworkRecord>>>(
      "listing sandbox networks", [&]() -> Result<std::vector<NetworkRecord>> {
        SQLite::Statement q(
            db_, "SELECT sandbox_id, slot, data, created_at FROM sandbox_networks ORDER BY slot");
        std::vector<NetworkRecord> out;
        while (q.executeStep()) {
          NetworkRecord n;
          n.sandbox_id = q.getColumn(0).getString();
          n.slot = q.getColumn(1).getInt64();
          DecodeNetworkData(q.getColumn(2).getString(), n);
          n.created_at = q.getColumn(3).getInt64();
          out.push_back(std::move(n));
        }
        return out;
      });
}

Result<NetworkRecord> SqliteStore::GetNetworkBySlot(int64_t slot) {
  return Guard<Result<NetworkRecord>>("reading a sandbox network", [&]() -> Result<NetworkRecord> {
    SQLite::Statement q(
        db_, "SELECT sandbox_id, slot, data, created_at FROM sandbox_networks WHERE slot = ?");
    q.bind(1, slot);
    if (!q.executeStep()) return NotFound("network slot " + std::to_string(slot) + " is free");
    NetworkRecord n;
    n.sandbox_id = q.getColumn(0).getString();
    n.slot = q.getColumn(1).getInt64();
    DecodeNetworkData(q.getColumn(2).getString(), n);
    n.created_at = q.getColumn(3).getInt64();
    return n;
  });
}

Status SqliteStore::DeleteNetwork(const std::string& sandbox_id) {
  return Guard("forgetting a sandbox network", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM sandbox_networks WHERE sandbox_id = ?");
    q.bind(1, sandbox_id);
    q.exec();
    return Status::Ok();
  });
}

Status SqliteStore::UpdateNetworkPolicy(const std::string& sandbox_id,
                                        const NetworkPolicyRecord& policy) {
  return Guard("updating a sandbox network", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement cur(db_, "SELECT data FROM sandbox_networks WHERE sandbox_id = ?");
    cur.bind(1, sandbox_id);
    if (!cur.executeStep()) return NotFound("sandbox " + sandbox_id + " has no network");
    NetworkRecord n;
    DecodeNetworkData(cur.getColumn(0).getString(), n);
    n.policy = policy;
    SQLite::Statement q(db_, "UPDATE sandbox_networks SET data = ? WHERE sandbox_id = ?");
    q.bind(1, EncodeNetworkData(n));
    q.bind(2, sandbox_id);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

EndpointRecord SqliteStore::ReadEndpoint(SQLite::Statement& q) {
  EndpointRecord e;
  e.id = q.getColumn(0).getString();
  e.org_id = q.getColumn(1).getString();
  e.sandbox_id = q.getColumn(2).getString();
  e.port = q.getColumn(3).getInt();
  e.hostname = q.getColumn(4).getString();
  e.created_at = q.getColumn(5).getInt64();
  e.seq = q.getColumn(6).getInt64();
  return e;
}

Status SqliteStore::PutEndpoint(const EndpointRecord& e, std::optional<int64_t> max_endpoints) {
  return Guard("saving endpoint", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement target(db_, "SELECT status FROM sandboxes WHERE id = ? AND org_id = ?");
    target.bind(1, e.sandbox_id);
    target.bind(2, e.org_id);
    RETURN_IF_ERROR(CheckEndpointTarget(
        e.sandbox_id, target.executeStep() ? target.getColumn(0).getString() : std::string()));
    if (max_endpoints) {
      SQLite::Statement count(db_, "SELECT COUNT(*) FROM endpoints WHERE org_id = ?");
      count.bind(1, e.org_id);
      count.executeStep();
      RETURN_IF_ERROR(CheckEndpointLimit(*max_endpoints, count.getColumn(0).getInt64()));
    }
    SQLite::Statement q(db_,
                        "INSERT INTO endpoints(id, org_id, sandbox_id, port, hostname, "
                        "created_at) VALUES (?,?,?,?,?,?)");
    q.bind(1, e.id);
    q.bind(2, e.org_id);
    q.bind(3, e.sandbox_id);
    q.bind(4, e.port);
    q.bind(5, e.hostname);
    q.bind(6, e.created_at);
    q.exec();
    tx.commit();
    return Status::Ok();
  });
}

Result<std::vector<EndpointRecord>> SqliteStore::ListEndpoints(const std::string& org_id,
                                                               const std::string& sandbox_id) {
  return Guard<Result<std::vector<EndpointRecord>>>(
      "listing endpoints", [&]() -> Result<std::vector<EndpointRecord>> {
        auto q = statements_.Get(
            "SELECT id, org_id, sandbox_id, port, hostname, created_at, seq FROM "
            "endpoints WHERE org_id = ? AND (? = '' OR sandbox_id = ?) "
            "ORDER BY seq");
        q->bind(1, org_id);
        q->bind(2, sandbox_id);
        q->bind(3, sandbox_id);
        std::vector<EndpointRecord> out;
        while (q->executeStep()) out.push_back(ReadEndpoint(*q));
        return out;
      });
}

Result<EndpointRecord> SqliteStore::FindEndpointByHostname(const std::string& hostname) {
  return Guard<Result<EndpointRecord>>("finding endpoint", [&]() -> Result<EndpointRecord> {
    SQLite::Statement q(db_,
                        "SELECT id, org_id, sandbox_id, port, hostname, created_at, seq FROM "
                        "endpoints WHERE hostname = ?");
    q.bind(1, hostname);
    if (!q.executeStep()) return NotFound("no endpoint named " + hostname);
    return ReadEndpoint(q);
  });
}

Status SqliteStore::DeleteEndpoint(const std::string& org_id, const std::string& id) {
  return Guard("deleting endpoint", [&]() -> Status {
    SQLite::Statement q(db_, "DELETE FROM endpoints WHERE id = ? AND org_id = ?");
    q.bind(1, id);
    q.bind(2, org_id);
    if (q.exec() == 0) return NotFound("endpoint " + id + " not found");
    return Status::Ok();
  });
}

Result<std::vector<std::string>> SqliteStore::DeleteEndpointsOfSandbox(
    const std::string& sandbox_id) {
  return Guard<Result<std::vector<std::string>>>(
      "deleting endpoints", [&]() -> Result<std::vector<std::string>> {
        std::vector<std::string> hosts;
        SQLite::Statement q(db_, "SELECT hostname FROM endpoints WHERE sandbox_id = ?");
        q.bind(1, sandbox_id);
        while (q.executeStep()) hosts.push_back(q.getColumn(0).getString());
        SQLite::Statement d(db_, "DELETE FROM endpoints WHERE sandbox_id = ?");
        d.bind(1, sandbox_id);
        d.exec();
        return hosts;
      });
}

}  // namespace adapt::store
