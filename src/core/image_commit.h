// Saving a sandbox's filesystem as an image (ImageService::Commit, POST
// /v1/sandboxes/{id}/image). The sandbox's writable layer (its overlay upper directory, with
// whiteouts for what it deleted) is copied as one new layer on top of the layers of the
// sandbox's image, which are shared, not copied; the result is an image of the organization,
// reached by its imageId like an import.
//
// Which sandboxes: a running one (its kernel writes back cached file data first; a file being
// written during the copy may be caught half-written, as with `docker commit --pause=false`),
// or a stopped durable one (its disk is kept: the consistent choice). An instant sandbox that
// was stopped has no writable layer any more; nothing else is live.
#pragma once

#include <string>

#include "base/status.h"
#include "core/image_types.h"
#include "store/records.h"

namespace adapt::core {

// The image record's import_format that marks a commit (its import_name is "name:tag").
inline constexpr const char* kCommitFormat = "commit";

// Conflict naming the sandbox's state unless it can be saved as an image now.
Status CheckCommittable(const store::SandboxRecord& r);

// "name:tag" after checking both: the name as storage names (1 to 63 lower-case letters,
// digits or '-', starting and ending with a letter or digit), the tag as OCI tags (1 to 128
// letters, digits, '_', '.' or '-', not starting with '.' or '-'; "latest" when absent).
Result<std::string> CommitName(const CommitImage& request);

}  // namespace adapt::core
