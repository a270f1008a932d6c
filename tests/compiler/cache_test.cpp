// The compile cache without nvcc: publish/lookup, races between publishers, locks.

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "compiler/compile_cache.h"
#include "compiler/compile_pool.h"
#include "temp_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

CompileInfo fake_build(const CompileCache& cache, TempDir& staging, const std::string& marker) {
  std::ofstream(staging.path() / "kagent_x.so") << marker;
  CompileInfo info;
  info.ok = true;
  info.artifact = (staging.path() / "kagent_x.so").string();
  info.command = "nvcc -c " + (staging.path() / "candidate.cu").string();
  info.op_name = "kagent_x::forward";
  info.seconds = 12.5;
  return info;
}
}  // namespace

TEST_CASE("cache dir resolution") {
  CHECK(CompileCache::default_dir("/x/y") == fs::path("/x/y"));
  ::setenv("KAGENT_CACHE_DIR", "/var/kc", 1);
  CHECK(CompileCache::default_dir("") == fs::path("/var/kc/compile"));
  ::unsetenv("KAGENT_CACHE_DIR");
  CHECK(CompileCache::default_dir("").filename() == "compile");
}

TEST_CASE("publish then lookup; paths point into the entry") {
  const testing::TempDir root("kagent-cache-test-publish");
  const fs::path& dir = root.path();
  CompileCache cache(dir);
  const std::string key(64, 'a');
  CHECK_FALSE(cache.lookup(key).has_value());
  TempDir staging = cache.make_staging(key);
  const fs::path staged = staging.path();
  CompileInfo published = cache.publish(key, staging, fake_build(cache, staging, "one"));
  CHECK_FALSE(fs::exists(staged));  // renamed, not copied
  CHECK(published.artifact == (cache.entry_dir(key) / "kagent_x.so").string());
  CHECK(published.command.find(cache.entry_dir(key).string()) != std::string::npos);
  auto hit = cache.lookup(key);
  REQUIRE(hit.has_value());
  CHECK(hit->cache_hit);
  CHECK(hit->seconds == 0);
  CHECK(hit->ok);
  CHECK(hit->op_name == "kagent_x::forward");
  CHECK(fs::exists(hit->artifact));
}

TEST_CASE("concurrent publishers of one key: one entry wins, all see it") {
  const testing::TempDir root("kagent-cache-test-race");
  const fs::path& dir = root.path();
  CompileCache cache(dir);
  const std::string key(64, 'b');
  std::vector<std::thread> threads;
  std::vector<std::string> artifacts(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      TempDir staging = cache.make_staging(key);
      artifacts[i] = cache.publish(key, staging, fake_build(cache, staging, fmt::format("t{}", i))).artifact;
    });
  for (auto& t : threads) t.join();
  for (const auto& a : artifacts) CHECK(a == (cache.entry_dir(key) / "kagent_x.so").string());
  CHECK(fs::is_empty(dir / "tmp"));  // losers cleaned up
}

TEST_CASE("file lock excludes other holders, threads included") {
  const testing::TempDir root("kagent-cache-test-lock");
  const fs::path& dir = root.path();
  CompileCache cache(dir);
  std::atomic<int> inside{0}, max_inside{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      auto lock = cache.lock("k");
      int now = ++inside;
      max_inside = std::max(max_inside.load(), now);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      --inside;
    });
  for (auto& t : threads) t.join();
  CHECK(max_inside == 1);
}

TEST_CASE("pool: destroyed with queued work, futures break instead of hanging") {
  std::vector<std::future<CompileInfo>> futures;
  {
    CompilePool pool(1, 8);
    CHECK(pool.threads() == 1);
    ProblemSpec spec;  // no outputs: compile_native fails fast before running nvcc
    spec.inputs.push_back({"x", "x", ArgKind::Unsupported, "", {}, false, "dict"});
    for (int i = 0; i < 4; ++i) futures.push_back(pool.submit(spec, "int x;", CompileOptions{}));
  }
  for (auto& f : futures) {
    try {
      CompileInfo info = f.get();
      CHECK_FALSE(info.ok);
      CHECK(info.errors.find("cannot take") != std::string::npos);
    } catch (const std::future_error& e) {
      CHECK(e.code() == std::future_errc::broken_promise);
    }
  }
}
