// DashboardSessions: who is signed in to the web dashboard. Signing in with an email and
// password (core::Users) or an API key opens a session named by a random token, which the
// browser keeps in an HttpOnly cookie. Sessions are kept in the store (the token's SHA-256
// only), so they outlive an adaptd restart: they end when they expire, when the person signs
// out (revoked), when their API key or user is deleted, or when the user's password changes.
// A session acts with its organization's rights, never the admin's, so a stolen cookie cannot
// manage other organizations. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "core/auth.h"
#include "core/users.h"
#include "store/store.h"

namespace adapt::dashboard {

struct OpenedSession {
  std::string token;  // the cookie's value; only its hash is kept
  int64_t expires_at = 0;
  core::Principal who;
};

class DashboardSessions {
 public:
  static constexpr int64_t kLifetimeMillis = 12LL * 3600 * 1000;
  // At most this many open: past it (once expired ones are dropped) a sign-in takes the place
  // of the oldest session of the organization holding the most, and an organization holding
  // a tenth of it gives up its own oldest. Never refused: one tenant signing in in a loop once
  // locked every other organization's users out for kLifetimeMillis.
  static constexpr size_t kMaxSessions = 10000;

  DashboardSessions(store::Store& store, core::Auth& auth, core::Users& users,
                    std::function<int64_t()> now);

  // Unauthenticated for an unknown key, as the API answers.
  Result<OpenedSession> SignInWithKey(const std::string& key);
  // Unauthenticated for an unknown email or a wrong password (one sentence for both).
  Result<OpenedSession> SignInWithPassword(const std::string& email, const std::string& password);
  // The session's Principal, read again each time (so registering counts at once).
  // Unauthenticated when the token is unknown, expired or revoked.
  Result<core::Principal> Find(const std::string& token);
  // Ends the session (revoked in the store); an unknown token is already signed out.
  Status SignOut(const std::string& token);

 private:
  // `key_expires_at`: the key's expiry (0: none), which the session does not outlive.
  Result<OpenedSession> Open(core::Principal who, int64_t key_expires_at = 0);

  store::Store& store_;
  core::Auth& auth_;
  core::Users& users_;
  std::function<int64_t()> now_;
};

}  // namespace adapt::dashboard
