// fetch-release: a deployed app's replica downloads its own release at start-up (from the
// storage gateway, with the release reference adaptd wrote into URL_FILE) and unpacks it,
// so that the release's bytes never pass through adaptd's agent connection. A minimal
// HTTP/1.1 client: one GET to a numeric address, a Content-Length body.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/file_tool.h"
#include "agent/file_util.h"
#include "agent/release_stream.h"

namespace adapt::agent {
namespace {

constexpr size_t kMaxHeader = 16 * 1024;
constexpr int kConnectTries = 20;  // the replica's network is up at start; a few retries spare

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct Url {
  std::string host;
  uint16_t port = 80;
  std::string target;  // path and query
};

bool ParseUrl(std::string text, Url& url) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  const std::string scheme = "http://";
  if (text.rfind(scheme, 0) != 0) return false;
  std::string rest = text.substr(scheme.size());
  size_t slash = rest.find('/');
  if (slash == std::string::npos) return false;
  std::string authority = rest.substr(0, slash);
  url.target = rest.substr(slash);
  size_t colon = authority.rfind(':');
  if (colon == std::string::npos) return false;
  url.host = authority.substr(0, colon);
  long port = std::strtol(authority.c_str() + colon + 1, nullptr, 10);
  if (port <= 0 || port > 65535) return false;
  url.port = static_cast<uint16_t>(port);
  return !url.host.empty();
}

int Connect(const Url& url) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(url.port);
  if (::inet_pton(AF_INET, url.host.c_str(), &addr.sin_addr) != 1) return -1;
  for (int i = 0; i < kConnectTries; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
    ::close(fd);
    ::usleep(250 * 1000);
  }
  return -1;
}

long ReadSome(int fd, char* buf, size_t n) {
  for (;;) {
    ssize_t got = ::recv(fd, buf, n, 0);
    if (got < 0 && errno == EINTR) continue;
    return static_cast<long>(got);
  }
}

}  // namespace

int FetchRelease(const char* url_file, const char* dir, const char* max_unpacked) {
  const std::string what = "fetch-release: ";
  char* end = nullptr;
  unsigned long long max = std::strtoull(max_unpacked, &end, 10);
  if (!end || *end || max == 0) return Fail(kExitUsage, what + "MAX_UNPACKED must be a count");
  std::string text;
  {
    int fd = ::open(url_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return FailErrno(errno, what + "cannot open", url_file);
    Socket file(fd);
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(file.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || text.size() > kMaxHeader) break;
      text.append(buf, static_cast<size_t>(n));
    }
  }
  Url url;
  if (!ParseUrl(text, url)) return Fail(kExitUsage, what + url_file + " holds no http:// URL");
  int raw = Connect(url);
  if (raw < 0)
    return FailErrno(errno, what + "cannot connect to the storage gateway at",
                     url.host + ":" + std::to_string(url.port));
  Socket sock(raw);
  const std::string request = "GET " + url.target + " HTTP/1.1\r\nHost: " + url.host + ":" +
                              std::to_string(url.port) + "\r\nConnection: close\r\n\r\n";
  if (!WriteAllFd(sock.get(), request.data(), request.size()))
    return FailErrno(errno, what + "cannot send the request to", url.host);
  // The status line and headers; what follows them is the body's start.
  std::string head;
  size_t body_at = std::string::npos;
  char buf[8192];
  while ((body_at = head.find("\r\n\r\n")) == std::string::npos) {
    if (head.size() > kMaxHeader)
      return Fail(kExitFailed, what + "the response's header is too long");
    long n = ReadSome(sock.get(), buf, sizeof buf);
    if (n <= 0) return Fail(kExitFailed, what + "the storage gateway closed the connection");
    head.append(buf, static_cast<size_t>(n));
  }
  std::string body = head.substr(body_at + 4);
  head.resize(body_at);
  const int status = head.size() > 12 ? std::atoi(head.c_str() + 9) : 0;
  std::string lower;
  for (char c : head) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
  size_t cl = lower.find("\r\ncontent-length:");
  uint64_t length =
      cl == std::string::npos ? 0 : std::strtoull(head.c_str() + cl + 17, nullptr, 10);
  if (status != 200) {
    // The gateway's error (S3's XML, one short message) says why: expired, gone, refused.
    while (body.size() < 2000) {
      long n = ReadSome(sock.get(), buf, sizeof buf);
      if (n <= 0) break;
      body.append(buf, static_cast<size_t>(n));
    }
    return Fail(status == 404 ? kExitNotFound : kExitDenied,
                what + "the storage gateway answered " + std::to_string(status) + ": " +
                    body.substr(0, 2000));
  }
  if (cl == std::string::npos)
    return Fail(kExitFailed, what + "the storage gateway's answer has no Content-Length");
  uint64_t received = 0;
  size_t pending_at = 0;
  bool short_body = false;
  ReleaseUnpacker unpacker(
      [&](char* out, size_t n) -> long {
        if (received >= length) return 0;
        size_t want = static_cast<size_t>(std::min<uint64_t>(n, length - received));
        long got;
        if (pending_at < body.size()) {
          got = static_cast<long>(std::min(want, body.size() - pending_at));
          std::memcpy(out, body.data() + pending_at, static_cast<size_t>(got));
          pending_at += static_cast<size_t>(got);
        } else {
          got = ReadSome(sock.get(), out, want);
          if (got <= 0) {
            short_body = true;
            return -1;
          }
        }
        received += static_cast<uint64_t>(got);
        return got;
      },
      max);
  int rc = ArchivePutFrom(dir, [&](char* out, size_t n) { return unpacker.Read(out, n); });
  if (short_body)
    return Fail(kExitFailed, what + "the download ended after " + std::to_string(received) +
                                 " of " + std::to_string(length) + " bytes");
  if (!unpacker.error().empty()) return Fail(kExitFailed, what + unpacker.error());
  if (rc != kExitOk) return rc;
  std::fprintf(stderr, "adapt-agent: fetch-release: %llu bytes downloaded, unpacked into %s\n",
               static_cast<unsigned long long>(received), dir);
  return kExitOk;
}

}  // namespace adapt::agent
