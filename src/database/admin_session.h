// A session of a DatabaseServer's admin role, for DatabaseService's statements. Where the
// server is an operator's (external), a failed connection's message names its host and port,
// which no API answer may carry: the caller gets one sentence without them, the log the detail.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "database/database_server.h"
#include "database/pg_session.h"

namespace adapt::database {

Result<std::unique_ptr<PgSession>> OpenAdminSession(const DatabaseServer& server,
                                                    const std::string& database = "postgres");

}  // namespace adapt::database
