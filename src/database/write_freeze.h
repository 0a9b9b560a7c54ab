// Making a tenant's database read-only to its owner role while it is over its size quota, in a
// way the role cannot undo (issue 19). default_transaction_read_only would not do: any session
// may SET it off. Instead every object the role owns, the database included, is handed to a
// NOLOGIN role of its own (FrozenOwnerName) by REASSIGN OWNED, and the role gets back only
// CONNECT, USAGE on its schemas and SELECT on its tables, views and sequences. The ways a
// non-owner could still write are closed too: grants the tenant gave PUBLIC on tables, schemas
// and the database are revoked, SECURITY DEFINER routines (which would run as the new owner)
// lose EXECUTE, and so do the large-object creators (lo_creat, lo_create, lo_from_bytea), which
// need no privilege. ThawWrites hands everything back and gives PUBLIC back EXECUTE on those
// routines (PostgreSQL's default); the PUBLIC grants on tables and schemas stay revoked.
//
// Both run in one transaction on `session`, a superuser's session in the tenant's database
// (named like its role), after ending the role's sessions (REASSIGN needs their locks); both are
// idempotent.
#pragma once

#include <string>

#include "base/status.h"
#include "database/pg_session.h"

namespace adapt::database {

// The role that owns `role`'s objects while they are frozen: `role` + "_frozen" (DatabaseName's
// 56 characters at most keep it within PostgreSQL's 63).
std::string FrozenOwnerName(const std::string& role);

Status FreezeWrites(PgSession& session, const std::string& role);
Status ThawWrites(PgSession& session, const std::string& role);

// Makes the session's role a member of `role` unless it is a superuser. An external server's
// admin (--database-admin-url) is often no superuser, only CREATEROLE; PostgreSQL 15 lets it
// grant itself membership, which CREATE DATABASE ... OWNER, REASSIGN OWNED, DROP DATABASE,
// pg_dump and ending the role's sessions need. Idempotent.
Status JoinRole(PgSession& session, const std::string& role);

// Ends every session of `role` (a superuser's `session` may be in any database).
Status EndSessionsOf(PgSession& session, const std::string& role);

}  // namespace adapt::database
