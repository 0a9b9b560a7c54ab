#include "agent/agent_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "agent/process_launch.h"
#include "agent/protocol.h"

namespace adapt::agent {
namespace {

// Output waiting for the socket beyond this stops the reading of process pipes, so a
// flood is slowed down to what adaptd reads instead of filling the agent's memory.
constexpr size_t kMaxPendingOut = 4 * 1024 * 1024;
// Output of a command that adaptd has not acknowledged (kAck) is kept, at least this much per
// stream (the latest) and at most twice that: what adaptd received and had not yet recorded
// when it died is sent again to the next one, which attaches the command again.
constexpr size_t kHeldPerStream = 1024 * 1024;
// A reconnected adaptd attaches the commands it knows at once; what it leaves unattached
// this long is nobody's any more (its output is then dropped).
constexpr int kAttachWindowSeconds = 30;

int g_sigchld_pipe[2] = {-1, -1};

void OnSigchld(int) {
  int saved = errno;
  (void)!::write(g_sigchld_pipe[1], "x", 1);
  errno = saved;
}

struct Process {
  uint32_t channel = 0;  // 0: nobody listens any more, output is discarded
  // adaptd's name for it (SpawnRequest::tag). With one, what adaptd has not acknowledged of
  // its output and exit is kept (held) until it is.
  std::string tag;
  // False from a disconnection until adaptd attaches the channel again.
  bool attached = true;
  std::string held[2];  // stdout, stderr not acknowledged (the latest bytes)
  // Per stream: bytes held so far, and how far adaptd acknowledged (same count): held[i]
  // ends at written[i].
  uint64_t written[2] = {0, 0};
  uint64_t acked[2] = {0, 0};
  pid_t pid = -1;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;
  std::string stdin_pending;
  bool stdin_close = false;  // close once stdin_pending is written
  bool exited = false;
  int status = 0;
  bool reported = false;
  bool end_acked = false;  // adaptd recorded its exit: nothing of it is kept any more
  // Its exit is sent, and nothing more is owed to adaptd.
  bool settled() const { return reported && (tag.empty() || end_acked); }
};

class Server {
 public:
  Server(std::string path, std::string key) : path_(std::move(path)), key_(std::move(key)) {}

  int Run() {
    int backoff_ms = 20;
    for (;;) {
      if (Connect()) {
        backoff_ms = 20;
        Session();
        ::close(sock_);
        sock_ = -1;
        // The commands of that connection continue; their output and exit are held for the
        // next adaptd, which may attach them again.
        for (auto& p : procs_) {
          if (p.settled() || p.channel == 0)
            p.channel = 0;
          else
            p.attached = false;
        }
        out_.clear();
        out_off_ = 0;
      }
      ::usleep(static_cast<useconds_t>(backoff_ms) * 1000);
      backoff_ms = std::min(backoff_ms * 2, 1000);
      Reap();
      DrainWhileAway();
    }
  }

  static long Now() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
  }

  void Hold(Process& p, int stream, std::string_view data) {
    std::string& h = p.held[stream - 1];
    h.append(data);
    p.written[stream - 1] += data.size();
    if (h.size() > 2 * kHeldPerStream) h.erase(0, h.size() - kHeldPerStream);
  }

  // Past the attach window, unattached processes are nobody's.
  void ExpireUnattached() {
    if (Now() - session_started_ < kAttachWindowSeconds) return;
    for (auto& p : procs_) {
      if (p.attached) continue;
      p.attached = true;
      p.channel = 0;
      p.held[0].clear();
      p.held[1].clear();
    }
  }

 private:
  // A blocking connection to adaptd's socket; -1 with errno set.
  int Dial() {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      int err = errno;
      ::close(fd);
      errno = err;
      return -1;
    }
    return fd;
  }

  // The data connection of a spawn (SpawnRequest::data_token), announced by its token.
  int DialData(uint32_t channel, const std::string& token) {
    int fd = Dial();
    if (fd < 0) return -1;
    std::string hello = EncodeFrame(FrameType::kData, channel, token);
    size_t off = 0;
    while (off < hello.size()) {
      ssize_t n = ::send(fd, hello.data() + off, hello.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int err = errno;
        ::close(fd);
        errno = err;
        return -1;
      }
      off += static_cast<size_t>(n);
    }
    return fd;
  }

  bool Connect() {
    int fd = Dial();
    if (fd < 0) return false;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    sock_ = fd;
    decoder_ = FrameDecoder();
    session_started_ = Now();
    std::vector<HeldProcess> held;
    for (const auto& p : procs_)
      if (!p.attached && p.channel != 0) held.push_back({p.channel, p.tag});
    Queue(FrameType::kHello, 0, EncodeHello(key_, held));
    return true;
  }

  void Queue(FrameType type, uint32_t channel, std::string_view payload) {
    if (sock_ < 0 || (channel == 0 && type != FrameType::kHello && type != FrameType::kRekey))
      return;
    out_ += EncodeFrame(type, channel, payload);
  }

  // One connection, until it drops or misbehaves.
  void Session() {
    std::vector<pollfd> fds;
    std::vector<std::pair<Process*, int>> who;  // per pollfd beyond the first two: process, stream
    for (;;) {
      fds.clear();
      who.clear();
      fds.push_back({g_sigchld_pipe[0], POLLIN, 0});
      fds.push_back(
          {sock_, static_cast<short>(POLLIN | (out_.size() > out_off_ ? POLLOUT : 0)), 0});
      bool room = out_.size() - out_off_ < kMaxPendingOut;
      for (auto& p : procs_) {
        bool drain = room || p.channel == 0 || !p.attached;  // held output is not queued
        if (p.stdout_fd >= 0 && drain) {
          fds.push_back({p.stdout_fd, POLLIN, 0});
          who.push_back({&p, 1});
        }
        if (p.stderr_fd >= 0 && drain) {
          fds.push_back({p.stderr_fd, POLLIN, 0});
          who.push_back({&p, 2});
        }
        if (p.stdin_fd >= 0 && !p.stdin_pending.empty()) {
          fds.push_back({p.stdin_fd, POLLOUT, 0});
          who.push_back({&p, 0});
        }
      }
      if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) return;
      if (fds[0].revents) {
        char buf[64];
        while (::read(g_sigchld_pipe[0], buf, sizeof buf) > 0) {
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto [p, stream] = who[i - 2];
        if (stream == 0)
          WriteStdin(*p);
        else
          ReadOutput(*p, stream);
      }
      if (fds[1].revents & POLLOUT) {
        if (!Flush()) return;
      }
      if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (!ReadSocket()) return;
      }
      Reap();
      ExpireUnattached();
      ReportExits();
      procs_.erase(std::remove_if(procs_.begin(), procs_.end(),
                                  [](const Process& p) {
                                    return (p.settled() || p.channel == 0) && p.reported &&
                                           p.stdout_fd < 0 && p.stderr_fd < 0;
                                  }),
                   procs_.end());
      if (out_.size() > out_off_ && !Flush()) return;
    }
  }

  bool Flush() {
    while (out_off_ < out_.size()) {
      ssize_t n = ::send(sock_, out_.data() + out_off_, out_.size() - out_off_, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      if (n <= 0) return false;
      out_off_ += static_cast<size_t>(n);
    }
    if (out_off_ == out_.size()) {
      out_.clear();
      out_off_ = 0;
    } else if (out_off_ > (1 << 20)) {
      out_.erase(0, out_off_);
      out_off_ = 0;
    }
    return true;
  }

  bool ReadSocket() {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(sock_, buf, sizeof buf);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      if (n <= 0) return false;
      decoder_.Feed(std::string_view(buf, static_cast<size_t>(n)));
      Frame f;
      for (;;) {
        auto next = decoder_.Pop(f);
        if (next == FrameDecoder::Next::kBad) return false;
        if (next == FrameDecoder::Next::kNeedMore) break;
        Handle(f);
      }
    }
  }

  Process* Find(uint32_t channel) {
    for (auto& p : procs_)
      if (p.channel == channel && channel != 0) return &p;
    return nullptr;
  }

  void Handle(const Frame& f) {
    std::vector<int32_t> ints;
    switch (f.type) {
      case FrameType::kSpawn: {
        SpawnRequest req;
        LaunchedProcess lp;
        if (f.channel == 0 || Find(f.channel) || !DecodeSpawn(f.payload, req)) {
          std::string msg = "adapt-agent: malformed spawn request\n";
          Queue(FrameType::kStderr, f.channel, msg);
          Queue(FrameType::kExit, f.channel, EncodeInts({kExitNotStarted, 0}));
          return;
        }
        int data_fd = -1;
        if (!req.data_token.empty() && (data_fd = DialData(f.channel, req.data_token)) < 0) {
          std::string msg = std::string("adapt-agent: cannot open a data connection: ") +
                            std::strerror(errno) + "\n";
          Queue(FrameType::kStderr, f.channel, msg);
          Queue(FrameType::kExit, f.channel, EncodeInts({kExitNotStarted, 0}));
          return;
        }
        bool launched = LaunchProcess(req, lp, data_fd);
        int launch_errno = errno;
        if (data_fd >= 0) ::close(data_fd);  // the process holds it now
        if (!launched) {
          std::string msg = std::string("adapt-agent: cannot start a process: ") +
                            std::strerror(launch_errno) + "\n";
          Queue(FrameType::kStderr, f.channel, msg);
          Queue(FrameType::kExit, f.channel, EncodeInts({kExitNotStarted, 0}));
          return;
        }
        Process p;
        p.channel = f.channel;
        p.pid = lp.pid;
        p.stdin_fd = lp.stdin_fd;
        p.stdout_fd = lp.stdout_fd;
        p.stderr_fd = lp.stderr_fd;
        p.tag = req.tag;
        procs_.push_back(std::move(p));
        Queue(FrameType::kStarted, f.channel, EncodeInts({lp.pid}));
        return;
      }
      case FrameType::kStdin: {
        Process* p = Find(f.channel);
        if (!p || p->stdin_fd < 0) return;
        if (f.payload.empty())
          p->stdin_close = true;
        else
          p->stdin_pending += f.payload;
        WriteStdin(*p);
        return;
      }
      case FrameType::kAttach: {
        Process* p = Find(f.channel);
        if (!p || p->attached) {
          Queue(FrameType::kExit, f.channel, "");  // not held here: lost
          return;
        }
        p->attached = true;
        // Everything not acknowledged, so also what the previous adaptd received and never
        // recorded; kept on (as sent on) until this adaptd acknowledges it.
        for (int stream : {1, 2}) {
          std::string& h = p->held[stream - 1];
          size_t from = h.size() > kHeldPerStream ? h.size() - kHeldPerStream : 0;
          h.erase(0, from);
          // This adaptd counts from here: what was dropped unsent is behind both counts.
          p->acked[stream - 1] = p->written[stream - 1] - h.size();
          for (size_t i = 0; i < h.size(); i += kOutputChunk)
            Queue(stream == 1 ? FrameType::kStdout : FrameType::kStderr, f.channel,
                  std::string_view(h).substr(i, kOutputChunk));
          if (p->tag.empty()) std::string().swap(h);
        }
        // An exit reported to an adaptd that did not record it, again; else it is reported
        // once the process ends.
        if (p->reported) QueueExit(*p);
        return;
      }
      case FrameType::kAck: {
        Process* p = Find(f.channel);
        Ack ack;
        if (!p || !p->attached || !DecodeAck(f.payload, ack)) return;
        int i = 0;
        for (uint64_t n : {ack.stdout_bytes, ack.stderr_bytes}) {
          std::string& h = p->held[i];
          p->acked[i] += std::min(n, p->written[i] - p->acked[i]);
          uint64_t start = p->written[i] - h.size();  // older ones were dropped when sent
          if (p->acked[i] > start) h.erase(0, static_cast<size_t>(p->acked[i] - start));
          ++i;
        }
        if (ack.ended && p->reported) p->end_acked = true;
        return;
      }
      case FrameType::kSignal: {
        Process* p = Find(f.channel);
        if (!p || !DecodeInts(f.payload, 1, ints)) return;
        // The group is the command's tree; the leader itself may already be gone.
        ::kill(-p->pid, ints[0]);
        if (!p->exited) ::kill(p->pid, ints[0]);
        return;
      }
      case FrameType::kRekey: {
        if (f.channel != 0 || f.payload.empty() || f.payload.size() > kMaxAgentKey) return;
        key_ = f.payload;
        Queue(FrameType::kRekey, 0, "");
        return;
      }
      default:
        return;  // frames only the agent sends, or unknown: ignored
    }
  }

  void WriteStdin(Process& p) {
    while (!p.stdin_pending.empty()) {
      ssize_t n = ::write(p.stdin_fd, p.stdin_pending.data(), p.stdin_pending.size());
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (n <= 0) {  // the process closed its stdin: what is left goes nowhere
        p.stdin_pending.clear();
        p.stdin_close = true;
        break;
      }
      p.stdin_pending.erase(0, static_cast<size_t>(n));
    }
    if (p.stdin_close && p.stdin_fd >= 0) {
      ::close(p.stdin_fd);
      p.stdin_fd = -1;
    }
  }

  // Reads what one pipe has now; closes it at end of file.
  void ReadOutput(Process& p, int stream) {
    int& fd = stream == 1 ? p.stdout_fd : p.stderr_fd;
    static char buf[kOutputChunk];
    for (int i = 0; i < 16 && fd >= 0; ++i) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (n <= 0) {
        ::close(fd);
        fd = -1;
        return;
      }
      std::string_view data(buf, static_cast<size_t>(n));
      // After its exit, what background children write is nobody's.
      if (!p.reported && (!p.attached || !p.tag.empty())) Hold(p, stream, data);
      if (p.attached && !p.reported)
        Queue(stream == 1 ? FrameType::kStdout : FrameType::kStderr, p.channel, data);
      if (out_.size() - out_off_ >= kMaxPendingOut) return;
    }
  }

  void Reap() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      for (auto& p : procs_) {
        if (p.pid == pid && !p.exited) {
          p.exited = true;
          p.status = status;
        }
      }
    }
  }

  // An exited process is reported once what it wrote before exiting has been read; its
  // pipes stay open (and drained) while background children it left still hold them.
  void ReportExits() {
    for (auto& p : procs_) {
      if (!p.exited || p.reported || !p.attached) continue;
      if (p.stdout_fd >= 0) ReadOutput(p, 1);
      if (p.stderr_fd >= 0) ReadOutput(p, 2);
      p.reported = true;
      if (p.stdin_fd >= 0) {
        ::close(p.stdin_fd);
        p.stdin_fd = -1;
      }
      QueueExit(p);
    }
  }

  void QueueExit(const Process& p) {
    int code = WIFEXITED(p.status) ? WEXITSTATUS(p.status) : -1;
    int sig = WIFSIGNALED(p.status) ? WTERMSIG(p.status) : 0;
    Queue(FrameType::kExit, p.channel, EncodeInts({code, sig}));
  }

  // While no adaptd is connected: the output of held processes is kept, the rest dropped.
  void DrainWhileAway() {
    static char buf[kOutputChunk];
    for (auto& p : procs_) {
      int stream = 0;
      for (int* fd : {&p.stdout_fd, &p.stderr_fd}) {
        ++stream;
        while (*fd >= 0) {
          ssize_t n = ::read(*fd, buf, sizeof buf);
          if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
          if (n <= 0) {
            ::close(*fd);
            *fd = -1;
          } else if (!p.attached && !p.reported) {
            Hold(p, stream, std::string_view(buf, static_cast<size_t>(n)));
          }
        }
      }
      if (p.exited && p.attached) p.reported = true;
    }
    procs_.erase(std::remove_if(procs_.begin(), procs_.end(),
                                [](const Process& p) {
                                  return p.exited && p.attached && p.stdout_fd < 0 &&
                                         p.stderr_fd < 0;
                                }),
                 procs_.end());
  }

  std::string path_;
  std::string key_;  // proves to adaptd that this is its agent
  int sock_ = -1;
  FrameDecoder decoder_;
  std::string out_;
  size_t out_off_ = 0;
  std::vector<Process> procs_;
  long session_started_ = 0;
};

// The key that adaptd's shim writes to the agent's stdin (then closes it), up to end of file.
std::string ReadKey() {
  std::string key;
  char buf[kMaxAgentKey + 1];
  for (;;) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    key.append(buf, static_cast<size_t>(n));
    if (key.size() > kMaxAgentKey) return "";
  }
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  return key;
}

}  // namespace

int Serve(const char* socket_path) {
  // Before anything else: the sandbox's other processes (root too, which lacks
  // CAP_SYS_PTRACE) may then not read this process's memory, environment or descriptors,
  // where the key lives.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (std::strlen(socket_path) >= sizeof(sockaddr_un{}.sun_path)) {
    std::fprintf(stderr, "adapt-agent: socket path too long\n");
    return 2;
  }
  std::string key = ReadKey();
  // The key's pipe is let go: nothing of the sandbox can open it through /proc/PID/fd/0.
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || ::dup2(null, 0) < 0) ::close(0);
  if (null > 0) ::close(null);
  if (key.empty()) {
    std::fprintf(stderr, "adapt-agent: no key on stdin\n");
    return 2;
  }
  // Orphans of the commands (their background children) are reaped here, not left to the
  // workload's PID 1, which may never reap.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // As the workload's spec says (noNewPrivileges): no command gains privileges by exec.
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  if (::pipe2(g_sigchld_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return 1;
  struct sigaction sa {};
  sa.sa_handler = OnSigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &sa, nullptr);
  // stdio is the detached `runsc exec`'s: nothing there is read.
  int devnull = ::open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    ::dup2(devnull, 0), ::dup2(devnull, 1), ::dup2(devnull, 2);
    if (devnull > 2) ::close(devnull);
  }
  Server server(socket_path, std::move(key));
  return server.Run();
}

}  // namespace adapt::agent
