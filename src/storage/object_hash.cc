#include "storage/object_hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include "base/background_work.h"
#include "base/hex.h"

namespace adapt::storage {

namespace {

// Smaller pieces are hashed inline: handing them over would cost more than their MD5.
constexpr size_t kHelperMinBytes = 64 * 1024;

}  // namespace

struct ObjectHasher::Impl {
  EVP_MD_CTX* sha = EVP_MD_CTX_new();
  EVP_MD_CTX* md5 = EVP_MD_CTX_new();

  // The MD5 helper, started at the first large piece. `job` is the piece it hashes now
  // (null when idle); both sides wait on `changed`.
  std::thread helper;
  std::mutex mu;
  std::condition_variable changed;
  const char* job = nullptr;
  size_t job_bytes = 0;
  bool quit = false;

  ~Impl() {
    if (helper.joinable()) {
      {
        std::lock_guard lock(mu);
        quit = true;
      }
      changed.notify_all();
      helper.join();
    }
    EVP_MD_CTX_free(sha);
    EVP_MD_CTX_free(md5);
  }

  void HashJobs() {
    std::unique_lock lock(mu);
    for (;;) {
      changed.wait(lock, [&] { return quit || job != nullptr; });
      if (job == nullptr) return;  // quit, with nothing left to hash
      const char* data = job;
      const size_t n = job_bytes;
      lock.unlock();
      EVP_DigestUpdate(md5, data, n);
      lock.lock();
      job = nullptr;
      changed.notify_all();
    }
  }

  // False when no thread could be started: the caller hashes inline.
  bool StartHelper() {
    if (helper.joinable()) return true;
    try {
      helper = std::thread(Guarded("object hashing", [this] { HashJobs(); }));
    } catch (const std::system_error&) {
      return false;
    }
    return true;
  }
};

ObjectHasher::ObjectHasher() : impl_(std::make_unique<Impl>()) {
  EVP_DigestInit_ex(impl_->sha, EVP_sha256(), nullptr);
  EVP_DigestInit_ex(impl_->md5, EVP_md5(), nullptr);
}

ObjectHasher::~ObjectHasher() = default;

void ObjectHasher::Update(const char* data, size_t n) {
  EVP_DigestUpdate(impl_->sha, data, n);
  EVP_DigestUpdate(impl_->md5, data, n);
}

Status ObjectHasher::UpdateAlongside(const char* data, size_t n,
                                     const std::function<Status()>& work) {
  Impl& h = *impl_;
  if (n < kHelperMinBytes || !h.StartHelper()) {
    Update(data, n);
    return work();
  }
  {
    std::lock_guard lock(h.mu);
    h.job = data;
    h.job_bytes = n;
  }
  h.changed.notify_all();
  EVP_DigestUpdate(h.sha, data, n);
  Status done = work();
  // `data` is the caller's again only once the helper is through with it.
  std::unique_lock lock(h.mu);
  h.changed.wait(lock, [&] { return h.job == nullptr; });
  return done;
}

void ObjectHasher::Finish(std::string& sha256_hex, std::string& md5_hex) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(impl_->sha, d, &n);
  sha256_hex = HexEncode(d, n);
  EVP_DigestFinal_ex(impl_->md5, d, &n);
  md5_hex = HexEncode(d, n);
}

std::string Md5Hex(const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), d, &n, EVP_md5(), nullptr);
  return HexEncode(d, n);
}

std::string HmacSha256(const std::string& key, const std::string& data) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), d, &n);
  return std::string(reinterpret_cast<char*>(d), n);
}

}  // namespace adapt::storage
