#include "daemon/config.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "os/files.h"

namespace adapt::daemon {
namespace {

void FromEnv(const char* name, std::string& field) {
  if (const char* v = std::getenv(name); v && *v) field = v;
}

Status FromFile(const std::string& path, DaemonConfig& c) {
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(path));
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return InvalidArgument("config", path + " is not a JSON object");
  try {
    for (const auto& [key, value] : j.items()) {
      if (key == "listen")
        c.listen = value;
      else if (key == "stateDir")
        c.state_dir = value;
      else if (key == "imagesDir")
        c.images_dir = value;
      else if (key == "defaultImage")
        c.default_image = value;
      else if (key == "runsc")
        c.runsc = value;
      else if (key == "libexecDir")
        c.libexec_dir = value;
      else if (key == "ioThreads")
        c.io_threads = value;
      else if (key == "workerThreads")
        c.worker_threads = value;
      else if (key == "maxBodyBytes")
        c.max_body_bytes = value;
      else
        return InvalidArgument(key, path + ": unknown setting '" + key + "'");
    }
  } catch (const std::exception& e) {
    return InvalidArgument("config", path + ": " + e.what());
  }
  return Status::Ok();
}

}  // namespace

Result<DaemonConfig> LoadConfig(int argc, char** argv) {
  DaemonConfig c;
  CLI::App app{"adaptd: the adapt sandbox daemon"};
  std::string config_file;
  DaemonConfig flags;
  app.add_option("--config", config_file, "JSON config file");
  auto* listen =
      app.add_option("--listen", flags.listen, "HOST:PORT to serve the API on [127.0.0.1:8080]");
  auto* state = app.add_option("--state-dir", flags.state_dir, "state directory [/var/lib/adapt]");
  auto* images = app.add_option("--images-dir", flags.images_dir, "local images [STATE/images]");
  auto* def = app.add_option("--default-image", flags.default_image,
                             "image when a create names none [debian:12]");
  auto* runsc = app.add_option("--runsc", flags.runsc, "runsc binary [runsc]");
  auto* libexec =
      app.add_option("--libexec-dir", flags.libexec_dir, "where adapt-shim and adapt-pause are");
  auto* workers =
      app.add_option("--worker-threads", flags.worker_threads, "threads for blocking work [8]");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return Status(Code::kInvalidArgument, app.help());
  } catch (const CLI::ParseError& e) {
    return InvalidArgument("", e.what());
  }
  if (!config_file.empty()) RETURN_IF_ERROR(FromFile(config_file, c));
  FromEnv("ADAPT_LISTEN", c.listen);
  FromEnv("ADAPT_STATE_DIR", c.state_dir);
  FromEnv("ADAPT_IMAGES_DIR", c.images_dir);
  FromEnv("ADAPT_DEFAULT_IMAGE", c.default_image);
  FromEnv("ADAPT_RUNSC", c.runsc);
  if (listen->count()) c.listen = flags.listen;
  if (state->count()) c.state_dir = flags.state_dir;
  if (images->count()) c.images_dir = flags.images_dir;
  if (def->count()) c.default_image = flags.default_image;
  if (runsc->count()) c.runsc = flags.runsc;
  if (libexec->count()) c.libexec_dir = flags.libexec_dir;
  if (workers->count()) c.worker_threads = flags.worker_threads;
  if (c.images_dir.empty()) c.images_dir = c.state_dir + "/images";
  if (c.io_threads < 1 || c.io_threads > 64)
    return InvalidArgument("ioThreads", "ioThreads must be between 1 and 64");
  if (c.max_body_bytes < 1024 || c.max_body_bytes > (64u << 20))
    return InvalidArgument("maxBodyBytes", "maxBodyBytes must be between 1 KiB and 64 MiB");
  if (c.worker_threads < 2 || c.worker_threads > 256)
    return InvalidArgument("worker-threads", "--worker-threads must be between 2 and 256");
  return c;
}

}  // namespace adapt::daemon
