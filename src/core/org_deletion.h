// Deleting an organization (DELETE /v1/orgs/{id}, `adapt org delete`): the admin key's verb.
// Seed 001 asks that an organization's sandboxes be deleted first, "including completed or
// failed ones, so their disks are cleaned up first", so a deletion is refused while any
// sandbox is not deleted, and while an app, an automation or an unfinished job could make one.
// Everything else the organization holds goes with it: its keys, users and tokens at once
// (nothing authenticates as it from then on), then its files (storage volumes, objects,
// sites, the checkpoints its deleted sandboxes kept), its PostgreSQL database, and last its
// rows. A deletion a crash cut is finished at the
// next start, before the API answers.
#pragma once

#include <mutex>
#include <string>

#include "base/status.h"
#include "core/auth.h"
#include "core/checkpoint_service.h"
#include "core/database_service.h"
#include "core/image_service.h"
#include "storage/object_store.h"
#include "storage/site_service.h"
#include "storage/volume_service.h"
#include "store/store.h"

namespace adapt::core {

class OrgDeletion {
 public:
  OrgDeletion(store::Store& store, storage::VolumeService& volumes, storage::ObjectStore& objects,
              storage::SiteService& sites, DatabaseService& databases, ImageService& images,
              CheckpointService& checkpoints)
      : store_(store),
        volumes_(volumes),
        objects_(objects),
        sites_(sites),
        databases_(databases),
        images_(images),
        checkpoints_(checkpoints) {}

  // Admin only (PermissionDenied otherwise). `confirm` must be exactly the organization's
  // name (InvalidArgument, field "confirm"). NotFound for an unknown organization; Conflict
  // for the admin organization or one with something left running (see above). Ok once the
  // organization is gone; on a failure part way (its database server down, say) it stays
  // closed and being deleted, and a repeat or the next start finishes it.
  Status Delete(const Principal& who, const std::string& org_id, const std::string& confirm);

  // Finishes every deletion a stopped adaptd left. Call once at start-up, before serving.
  void Resume();

 private:
  // Removes a closed organization's files, database and rows.
  Status Finish(const std::string& org_id);
  Status DeleteObjects(const std::string& org_id);
  Status DeleteSites(const std::string& org_id);
  // The checkpoints its deleted sandboxes kept (memory images and disks, in the checkpoint
  // store): nothing else removes them once the sandboxes' rows are gone.
  Status DeleteCheckpoints(const std::string& org_id);

  store::Store& store_;
  storage::VolumeService& volumes_;
  storage::ObjectStore& objects_;
  storage::SiteService& sites_;
  DatabaseService& databases_;
  ImageService& images_;
  CheckpointService& checkpoints_;
  std::mutex mu_;  // one deletion at a time
};

}  // namespace adapt::core
