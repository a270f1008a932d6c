// A per-machine artifact built once into the compile cache under a key (the precompiled headers
// of host_pch.h, the preprocessor prefixes of prefix_preprocess.h): looked up, else built under
// the key's lock in a staging folder and published, a failed build remembered like a compile
// error, a build that ran into a limit (or kagent's own trouble) tried again next time.
#pragma once

#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "compiler/compile_cache.h"

namespace kagent {

// What a build reports: the artifact's path in the staging folder, or why it did not build.
struct BuiltArtifact {
  std::filesystem::path path;
  std::string why;  // empty: built
  bool limit = false;
};

// The cached artifact's path, or nullopt when the build failed (remembered) or ran into a limit
// (not remembered). `build(staging)` returns a BuiltArtifact.
template <class Build>
std::optional<std::filesystem::path> cached_artifact(const CompileCache& cache, const std::string& key, Build build) {
  auto path_of = [](const CompileInfo& info) -> std::optional<std::filesystem::path> {
    if (!info.ok) return std::nullopt;
    return std::filesystem::path(info.artifact);
  };
  if (auto hit = cache.lookup(key)) return path_of(*hit);
  auto lock = cache.lock(key);
  if (auto hit = cache.lookup(key)) return path_of(*hit);
  TempDir staging = cache.make_staging(key);
  CompileInfo info;
  try {
    const BuiltArtifact b = build(staging.path());
    if (b.limit) return std::nullopt;
    info.ok = b.why.empty();
    info.errors = b.why;
    info.artifact = b.path.string();
  } catch (const std::exception&) {
    return std::nullopt;  // kagent's own trouble (a file it could not write): tried again next time
  }
  return path_of(cache.publish(key, staging, std::move(info)));
}

}  // namespace kagent
