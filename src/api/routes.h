// The REST API's routes, one file per resource. Each only translates HTTP to the core's
// typed verbs and back.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "api/router.h"
#include "core/command_service.h"
#include "core/endpoint_service.h"
#include "core/environments.h"
#include "core/event_bus.h"
#include "core/file_service.h"
#include "core/image_service.h"
#include "core/job_service.h"
#include "core/sandbox_service.h"
#include "core/secret_service.h"
#include "storage/volume_service.h"
#include "store/store.h"

namespace adapt::api {

void AddSandboxRoutes(Router& router, core::SandboxService& sandboxes);
void AddCommandRoutes(Router& router, core::CommandService& commands,
                      boost::asio::thread_pool& workers);
void AddOrgRoutes(Router& router, core::Auth& auth);
// /v1/images and GET /v1/operations/{id} (image pulls).
void AddImageRoutes(Router& router, core::ImageService& images);
// GET /v1/environments.
void AddEnvironmentRoutes(Router& router, const core::ImageCatalog& catalog);
void AddEventRoutes(Router& router, store::Store& store, core::EventBus& bus,
                    core::SandboxService& sandboxes, boost::asio::thread_pool& workers);
void AddFileRoutes(Router& router, core::FileService& files);
// For HttpServerOptions::stream_request_body: the file, archive and image archive uploads.
bool StreamsRequestBody(std::string_view method, std::string_view path);
void AddEndpointRoutes(Router& router, core::EndpointService& endpoints);
// /v1/storage (persistent storage volumes).
void AddStorageRoutes(Router& router, storage::VolumeService& volumes);
// GET /healthz, without a key.
void AddHealthRoutes(Router& router);
// /v1/secrets (organization secrets; values go in, never out).
void AddSecretRoutes(Router& router, core::SecretService& secrets);
// /v1/jobs and /v1/runs (one-shot jobs and their runs).
void AddJobRoutes(Router& router, core::JobService& jobs);

}  // namespace adapt::api
