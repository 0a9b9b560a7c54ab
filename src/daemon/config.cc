#include "daemon/config.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "database/admin_url.h"
#include "os/files.h"

namespace adapt::daemon {
namespace {

constexpr int64_t kMaxEventRetentionSeconds = int64_t{10} * 365 * 86400;

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
      else if (key == "maxConnections")
        c.max_connections = value;
      else if (key == "maxConnectionsPerClient")
        c.max_connections_per_client = value;
      else if (key == "maxStreamsPerOrg")
        c.max_streams_per_org = value;
      else if (key == "headerTimeoutSeconds")
        c.header_timeout_seconds = value;
      else if (key == "idleTimeoutSeconds")
        c.idle_timeout_seconds = value;
      else if (key == "proxyIdleTimeoutSeconds")
        c.proxy_idle_timeout_seconds = value;
      else if (key == "minUploadBytesPerSecond")
        c.min_upload_bytes_per_second = value;
      else if (key == "uploadGraceSeconds")
        c.upload_grace_seconds = value;
      else if (key == "networkPool")
        c.network_pool = value;
      else if (key == "networkPool6")
        c.network_pool6 = value;
      else if (key == "dns")
        c.dns = value;
      else if (key == "networkName")
        c.network_name = value;
      else if (key == "ingressHttp")
        c.ingress_http = value;
      else if (key == "ingressHttps")
        c.ingress_https = value;
      else if (key == "storageListen")
        c.storage_listen = value;
      else if (key == "databaseListen")
        c.database_listen = value;
      else if (key == "databaseAdminUrl")
        c.database_admin_url = value;
      else if (key == "databaseMaxSessions")
        c.database_max_sessions = value;
      else if (key == "objectQuotaBytes")
        c.object_quota_bytes = value;
      else if (key == "multipartMaxAgeSeconds")
        c.multipart_max_age_seconds = value;
      else if (key == "appReleaseGraceSeconds")
        c.app_release_grace_seconds = value;
      else if (key == "maxSandboxesPerOrg")
        c.max_sandboxes_per_org = value;
      else if (key == "maxImagesPerOrg")
        c.max_images_per_org = value;
      else if (key == "maxImportsPerOrg")
        c.max_imports_per_org = value;
      else if (key == "jobConcurrencyPerOrg")
        c.job_concurrency_per_org = value;
      else if (key == "mcpCallThreads")
        c.mcp_call_threads = value;
      else if (key == "allowSignup")
        c.allow_signup = value;
      else if (key == "ingressDomain")
        c.ingress_domain = value;
      else if (key == "ingressCert")
        c.ingress_cert = value;
      else if (key == "ingressKey")
        c.ingress_key = value;
      else if (key == "trustedImageSources")
        c.trusted_image_sources = value.get<std::vector<std::string>>();
      else if (key == "developerPublicImages")
        c.developer_public_images = value.get<bool>();
      else if (key == "imagePolicy")
        c.image_policy = value;
      else if (key == "plansFile")
        c.plans_file = value;
      else if (key == "termsVersion")
        c.terms_version = value;
      else if (key == "meteringIntervalSeconds")
        c.metering_interval_seconds = value;
      else if (key == "storageMeteringIntervalSeconds")
        c.storage_metering_interval_seconds = value;
      else if (key == "databaseQuotaIntervalSeconds")
        c.database_quota_interval_seconds = value;
      else if (key == "runCancelGraceSeconds")
        c.run_cancel_grace_seconds = value;
      else if (key == "eventRetentionSeconds")
        c.event_retention_seconds = value;
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
  auto* pool = app.add_option("--network-pool", flags.network_pool,
                              "IPv4 block for sandbox addresses [10.88.0.0/16]");
  auto* pool6 = app.add_option("--network-pool6", flags.network_pool6,
                               "unique-local /96 for sandbox IPv6 addresses, \"\" for none "
                               "[fd61:6461:7074::/96]");
  auto* dns = app.add_option("--dns", flags.dns, "open mode's DNS resolver [1.1.1.1]");
  auto* net_name = app.add_option("--network-name", flags.network_name,
                                  "nftables table and netns prefix of this adaptd [adapt]");
  auto* ingress_http = app.add_option("--ingress-http", flags.ingress_http,
                                      "HOST:PORT of the endpoints' HTTP listener [127.0.0.1:8081]");
  auto* ingress_https =
      app.add_option("--ingress-https", flags.ingress_https,
                     "HOST:PORT of the endpoints' HTTPS listener [127.0.0.1:8443]");
  auto* ingress_domain = app.add_option("--ingress-domain", flags.ingress_domain,
                                        "domain of endpoint hostnames [adapt.localhost]");
  auto* ingress_cert =
      app.add_option("--ingress-cert", flags.ingress_cert, "HTTPS certificate (PEM) [self-signed]");
  auto* ingress_key = app.add_option("--ingress-key", flags.ingress_key, "its key (PEM)");
  auto* storage_listen =
      app.add_option("--storage-listen", flags.storage_listen,
                     "HOST:PORT of the storage gateway (S3-compatible) [0.0.0.0:8082]");
  auto* database_listen =
      app.add_option("--database-listen", flags.database_listen,
                     "HOST:PORT of the sandboxes' database proxy [0.0.0.0:5433]");
  auto* database_admin_url = app.add_option(
      "--database-admin-url", flags.database_admin_url,
      "postgres://USER:PASSWORD@HOST:PORT/DB of an existing PostgreSQL server's admin role, "
      "instead of a cluster under STATE/postgres (visible in the process list: prefer "
      "ADAPT_DATABASE_ADMIN_URL or the config file)");
  auto* database_max_sessions = app.add_option(
      "--database-max-sessions", flags.database_max_sessions,
      "sandbox sessions the database proxy lets through to the server at once, all "
      "organizations together; 0: the server's room (the embedded one's 285; an external one's "
      "max_connections less its reserved slots and 12 for adaptd) [0]");
  auto* object_quota = app.add_option("--object-quota-bytes", flags.object_quota_bytes,
                                      "object storage per organization, 0: no limit [50 GiB]");
  auto* multipart_age =
      app.add_option("--multipart-max-age", flags.multipart_max_age_seconds,
                     "seconds before an unfinished multipart upload is removed [86400]");
  auto* release_grace = app.add_option(
      "--app-release-grace-seconds", flags.app_release_grace_seconds,
      "seconds a deleted app's releases are kept before they are removed, 0: at once [3600]");
  auto* workers =
      app.add_option("--worker-threads", flags.worker_threads, "threads for blocking work [8]");
  auto* max_sandboxes = app.add_option("--max-sandboxes-per-org", flags.max_sandboxes_per_org,
                                       "live sandboxes per organization, 0: no cap [50]");
  auto* max_images = app.add_option("--max-images-per-org", flags.max_images_per_org,
                                    "images per organization, 0: no cap [100]");
  auto* max_imports = app.add_option("--max-imports-per-org", flags.max_imports_per_org,
                                     "image pulls and imports in progress per organization [4]");
  auto* plans_file = app.add_option("--plans-file", flags.plans_file,
                                    "JSON file of plans ({\"plans\": [...]}) [none]");
  auto* terms_version = app.add_option("--terms-version", flags.terms_version,
                                       "terms version register_user accepts [1]");
  auto* metering = app.add_option("--metering-interval-seconds", flags.metering_interval_seconds,
                                  "seconds between usage entries of running sandboxes, 1-30 [30]");
  auto* storage_metering =
      app.add_option("--storage-metering-interval-seconds", flags.storage_metering_interval_seconds,
                     "seconds each volume's storage usage entry covers, 1-86400 [3600]");
  auto* database_quota =
      app.add_option("--database-quota-interval-seconds", flags.database_quota_interval_seconds,
                     "seconds between checks of the databases' size quotas, 1-3600 [30]");
  auto* run_cancel_grace = app.add_option(
      "--run-cancel-grace-seconds", flags.run_cancel_grace_seconds,
      "seconds a cancelled run's command has between SIGTERM and SIGKILL, 1-300 [10]");
  auto* event_retention = app.add_option("--event-retention-seconds", flags.event_retention_seconds,
                                         "seconds events are kept, 1-315360000 [604800: 7 days]");
  auto* job_concurrency = app.add_option("--job-concurrency-per-org", flags.job_concurrency_per_org,
                                         "one-shot jobs running at once per organization [4]");
  auto* mcp_threads = app.add_option("--mcp-call-threads", flags.mcp_call_threads,
                                     "MCP tool calls running at once [16]");
  auto* max_connections =
      app.add_option("--max-connections", flags.max_connections,
                     "connections each listener holds at once, 0: no limit [4096]");
  auto* max_per_client =
      app.add_option("--max-connections-per-client", flags.max_connections_per_client,
                     "connections one address may hold on each listener, 0: no limit [256]");
  auto* max_streams =
      app.add_option("--max-streams-per-org", flags.max_streams_per_org,
                     "event streams and waiting requests one organization holds open at once, 0: "
                     "no limit [256]");
  auto* header_timeout = app.add_option("--header-timeout", flags.header_timeout_seconds,
                                        "seconds for a request head to arrive [10]");
  auto* idle_timeout =
      app.add_option("--idle-timeout", flags.idle_timeout_seconds,
                     "seconds a kept-alive connection waits for its next request [60]");
  auto* proxy_idle_timeout =
      app.add_option("--proxy-idle-timeout", flags.proxy_idle_timeout_seconds,
                     "seconds a proxied connection may carry nothing either way [900]");
  auto* min_upload_rate =
      app.add_option("--min-upload-rate", flags.min_upload_bytes_per_second,
                     "bytes/s a request body must keep up after the grace, 0: none [1024]");
  auto* upload_grace = app.add_option("--upload-grace", flags.upload_grace_seconds,
                                      "seconds before the upload rate is judged [10]");
  auto* warm_pools = app.add_option(
      "--warm-pool", flags.warm_pools,
      "pre-booted sandboxes: IMAGE=N[,cpu=C][,memoryMiB=M][,diskMiB=D]; repeatable [none]");
  auto* allow_registries = app.add_option(
      "--allow-registry", flags.allowed_registries,
      "HOST[:PORT] of a registry on a loopback or private address that pulls may reach; "
      "repeatable [none]");
  auto* trusted = app.add_option(
      "--trusted-image-source", flags.trusted_image_sources,
      "an image source the assistant's sandboxes may use: REGISTRY/*, [REGISTRY/]PREFIX/* or "
      "[REGISTRY/]REPOSITORY; repeatable [docker.io/library/*]");
  auto* public_images =
      app.add_option("--developer-public-images", flags.developer_public_images,
                     "the assistant's developer sandboxes also take any public image [false]");
  auto* image_policy =
      app.add_option("--image-policy", flags.image_policy,
                     "assistant: the REST API follows the trusted sources too; open: any "
                     "image [open]");
  auto* allow_signup = app.add_flag("--allow-signup", flags.allow_signup,
                                    "let anyone create an account on the OAuth sign-in page [off]");
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
  FromEnv("ADAPT_NETWORK_POOL", c.network_pool);
  FromEnv("ADAPT_NETWORK_POOL6", c.network_pool6);
  FromEnv("ADAPT_DNS", c.dns);
  FromEnv("ADAPT_NETWORK_NAME", c.network_name);
  FromEnv("ADAPT_INGRESS_HTTP", c.ingress_http);
  FromEnv("ADAPT_INGRESS_HTTPS", c.ingress_https);
  FromEnv("ADAPT_INGRESS_DOMAIN", c.ingress_domain);
  FromEnv("ADAPT_INGRESS_CERT", c.ingress_cert);
  FromEnv("ADAPT_INGRESS_KEY", c.ingress_key);
  FromEnv("ADAPT_STORAGE_LISTEN", c.storage_listen);
  FromEnv("ADAPT_DATABASE_LISTEN", c.database_listen);
  FromEnv("ADAPT_DATABASE_ADMIN_URL", c.database_admin_url);
  FromEnv("ADAPT_PLANS_FILE", c.plans_file);
  FromEnv("ADAPT_TERMS_VERSION", c.terms_version);
  // ADAPT_WARM_POOLS: specs separated by ';' (each spec uses ',' itself).
  std::string env_pools;
  FromEnv("ADAPT_WARM_POOLS", env_pools);
  if (!env_pools.empty()) c.warm_pools = {env_pools};
  if (listen->count()) c.listen = flags.listen;
  if (state->count()) c.state_dir = flags.state_dir;
  if (images->count()) c.images_dir = flags.images_dir;
  if (def->count()) c.default_image = flags.default_image;
  if (runsc->count()) c.runsc = flags.runsc;
  if (libexec->count()) c.libexec_dir = flags.libexec_dir;
  if (pool->count()) c.network_pool = flags.network_pool;
  if (pool6->count()) c.network_pool6 = flags.network_pool6;
  if (dns->count()) c.dns = flags.dns;
  if (net_name->count()) c.network_name = flags.network_name;
  if (ingress_http->count()) c.ingress_http = flags.ingress_http;
  if (ingress_https->count()) c.ingress_https = flags.ingress_https;
  if (ingress_domain->count()) c.ingress_domain = flags.ingress_domain;
  if (ingress_cert->count()) c.ingress_cert = flags.ingress_cert;
  if (ingress_key->count()) c.ingress_key = flags.ingress_key;
  if (storage_listen->count()) c.storage_listen = flags.storage_listen;
  if (database_listen->count()) c.database_listen = flags.database_listen;
  if (database_admin_url->count()) c.database_admin_url = flags.database_admin_url;
  if (database_max_sessions->count()) c.database_max_sessions = flags.database_max_sessions;
  // Refused here, before anything starts; the message never quotes the URL (its password).
  if (!c.database_admin_url.empty())
    RETURN_IF_ERROR(database::ParseAdminUrl(c.database_admin_url).status());
  if (const char* v = std::getenv("ADAPT_OBJECT_QUOTA_BYTES"); v && *v)
    c.object_quota_bytes = std::strtoull(v, nullptr, 10);
  if (object_quota->count()) c.object_quota_bytes = flags.object_quota_bytes;
  if (multipart_age->count()) c.multipart_max_age_seconds = flags.multipart_max_age_seconds;
  if (c.multipart_max_age_seconds < 1 || c.multipart_max_age_seconds > 30 * 86400)
    return InvalidArgument("multipartMaxAgeSeconds",
                           "multipartMaxAgeSeconds must be between 1 and 2592000 (30 days)");
  if (release_grace->count()) c.app_release_grace_seconds = flags.app_release_grace_seconds;
  if (c.app_release_grace_seconds < 0 || c.app_release_grace_seconds > 30 * 86400)
    return InvalidArgument("appReleaseGraceSeconds",
                           "appReleaseGraceSeconds must be between 0 and 2592000 (30 days)");
  if (warm_pools->count()) c.warm_pools = flags.warm_pools;
  // ADAPT_ALLOW_REGISTRIES: HOST[:PORT] entries separated by ','.
  std::string env_registries;
  FromEnv("ADAPT_ALLOW_REGISTRIES", env_registries);
  for (size_t i = 0; !env_registries.empty() && i != std::string::npos;) {
    size_t comma = env_registries.find(',', i);
    c.allowed_registries.push_back(env_registries.substr(i, comma - i));
    i = comma == std::string::npos ? comma : comma + 1;
  }
  if (allow_registries->count()) c.allowed_registries = flags.allowed_registries;
  // ADAPT_TRUSTED_IMAGE_SOURCES: sources separated by ','.
  std::string env_sources;
  FromEnv("ADAPT_TRUSTED_IMAGE_SOURCES", env_sources);
  if (!env_sources.empty()) c.trusted_image_sources.clear();
  for (size_t i = 0; !env_sources.empty() && i != std::string::npos;) {
    size_t comma = env_sources.find(',', i);
    c.trusted_image_sources.push_back(env_sources.substr(i, comma - i));
    i = comma == std::string::npos ? comma : comma + 1;
  }
  std::string env_public;
  FromEnv("ADAPT_DEVELOPER_PUBLIC_IMAGES", env_public);
  if (!env_public.empty()) c.developer_public_images = env_public == "true" || env_public == "1";
  FromEnv("ADAPT_IMAGE_POLICY", c.image_policy);
  if (trusted->count()) c.trusted_image_sources = flags.trusted_image_sources;
  if (public_images->count()) c.developer_public_images = flags.developer_public_images;
  if (image_policy->count()) c.image_policy = flags.image_policy;
  if (c.image_policy != "assistant" && c.image_policy != "open")
    return InvalidArgument("imagePolicy", "imagePolicy must be \"assistant\" or \"open\"");
  if (const char* v = std::getenv("ADAPT_ALLOW_SIGNUP"); v && *v)
    c.allow_signup = std::string(v) == "1" || std::string(v) == "true";
  if (allow_signup->count()) c.allow_signup = flags.allow_signup;
  if (max_connections->count()) c.max_connections = flags.max_connections;
  if (max_per_client->count()) c.max_connections_per_client = flags.max_connections_per_client;
  if (max_streams->count()) c.max_streams_per_org = flags.max_streams_per_org;
  if (header_timeout->count()) c.header_timeout_seconds = flags.header_timeout_seconds;
  if (idle_timeout->count()) c.idle_timeout_seconds = flags.idle_timeout_seconds;
  if (proxy_idle_timeout->count()) c.proxy_idle_timeout_seconds = flags.proxy_idle_timeout_seconds;
  if (min_upload_rate->count()) c.min_upload_bytes_per_second = flags.min_upload_bytes_per_second;
  if (upload_grace->count()) c.upload_grace_seconds = flags.upload_grace_seconds;
  if (c.max_connections < 0 || c.max_connections > 1'000'000)
    return InvalidArgument("maxConnections", "maxConnections must be between 0 and 1000000");
  if (c.max_connections_per_client < 0 || c.max_connections_per_client > 1'000'000)
    return InvalidArgument("maxConnectionsPerClient",
                           "maxConnectionsPerClient must be between 0 and 1000000");
  if (c.max_streams_per_org < 0 || c.max_streams_per_org > 1'000'000)
    return InvalidArgument("maxStreamsPerOrg", "maxStreamsPerOrg must be between 0 and 1000000");
  for (auto [value, name] : {std::pair{c.header_timeout_seconds, "headerTimeoutSeconds"},
                             std::pair{c.idle_timeout_seconds, "idleTimeoutSeconds"},
                             std::pair{c.proxy_idle_timeout_seconds, "proxyIdleTimeoutSeconds"},
                             std::pair{c.upload_grace_seconds, "uploadGraceSeconds"}}) {
    if (value < 1 || value > 86400)
      return InvalidArgument(name, std::string(name) + " must be between 1 and 86400");
  }
  if (c.ingress_cert.empty() != c.ingress_key.empty())
    return InvalidArgument("ingressCert", "give both ingressCert and ingressKey, or neither");
  if (workers->count()) c.worker_threads = flags.worker_threads;
  if (c.images_dir.empty()) c.images_dir = c.state_dir + "/images";
  if (c.io_threads < 1 || c.io_threads > 64)
    return InvalidArgument("ioThreads", "ioThreads must be between 1 and 64");
  if (c.max_body_bytes < 1024 || c.max_body_bytes > (64u << 20))
    return InvalidArgument("maxBodyBytes", "maxBodyBytes must be between 1 KiB and 64 MiB");
  {
    const auto& n = c.network_name;
    bool ok = !n.empty() && n.size() <= 32 && std::isalpha(static_cast<unsigned char>(n[0]));
    for (char ch : n) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ok)
      return InvalidArgument(
          "networkName", "networkName must be 1-32 letters, digits or '_', starting with a letter");
  }
  if (max_sandboxes->count()) c.max_sandboxes_per_org = flags.max_sandboxes_per_org;
  if (plans_file->count()) c.plans_file = flags.plans_file;
  if (terms_version->count()) c.terms_version = flags.terms_version;
  if (c.terms_version.empty() || c.terms_version.size() > 64)
    return InvalidArgument("termsVersion", "termsVersion must be 1 to 64 characters");
  if (max_images->count()) c.max_images_per_org = flags.max_images_per_org;
  if (max_imports->count()) c.max_imports_per_org = flags.max_imports_per_org;
  if (mcp_threads->count()) c.mcp_call_threads = flags.mcp_call_threads;
  if (metering->count()) c.metering_interval_seconds = flags.metering_interval_seconds;
  if (storage_metering->count())
    c.storage_metering_interval_seconds = flags.storage_metering_interval_seconds;
  if (c.metering_interval_seconds < 1 || c.metering_interval_seconds > 30)
    return InvalidArgument("meteringIntervalSeconds",
                           "meteringIntervalSeconds must be between 1 and 30");
  if (c.storage_metering_interval_seconds < 1 || c.storage_metering_interval_seconds > 86400)
    return InvalidArgument("storageMeteringIntervalSeconds",
                           "storageMeteringIntervalSeconds must be between 1 and 86400");
  if (database_quota->count())
    c.database_quota_interval_seconds = flags.database_quota_interval_seconds;
  if (c.database_quota_interval_seconds < 1 || c.database_quota_interval_seconds > 3600)
    return InvalidArgument("databaseQuotaIntervalSeconds",
                           "databaseQuotaIntervalSeconds must be between 1 and 3600");
  if (run_cancel_grace->count()) c.run_cancel_grace_seconds = flags.run_cancel_grace_seconds;
  if (c.run_cancel_grace_seconds < 1 || c.run_cancel_grace_seconds > 300)
    return InvalidArgument("runCancelGraceSeconds",
                           "runCancelGraceSeconds must be between 1 and 300");
  if (event_retention->count()) c.event_retention_seconds = flags.event_retention_seconds;
  if (c.event_retention_seconds < 1 || c.event_retention_seconds > kMaxEventRetentionSeconds)
    return InvalidArgument("eventRetentionSeconds",
                           "eventRetentionSeconds must be between 1 and 315360000 (10 years)");
  if (job_concurrency->count()) c.job_concurrency_per_org = flags.job_concurrency_per_org;
  if (c.job_concurrency_per_org < 1 || c.job_concurrency_per_org > 1000)
    return InvalidArgument("jobConcurrencyPerOrg",
                           "jobConcurrencyPerOrg must be between 1 and 1000");
  for (auto [name, value] : {std::pair{"maxSandboxesPerOrg", c.max_sandboxes_per_org},
                             {"maxImagesPerOrg", c.max_images_per_org},
                             {"maxImportsPerOrg", c.max_imports_per_org},
                             {"databaseMaxSessions", c.database_max_sessions}}) {
    if (value < 0 || value > 1000000)
      return InvalidArgument(name, std::string(name) + " must be between 0 and 1000000");
  }
  if (c.mcp_call_threads < 1 || c.mcp_call_threads > 1024)
    return InvalidArgument("mcpCallThreads", "mcpCallThreads must be between 1 and 1024");
  if (c.worker_threads < 2 || c.worker_threads > 256)
    return InvalidArgument("worker-threads", "--worker-threads must be between 2 and 256");
  return c;
}

}  // namespace adapt::daemon
