// The CUDA probe's answer kept for the boot: read back under its key only.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "common/files.h"
#include "sandbox/cuda_probe_memo.h"

using namespace kagent::sandbox;
namespace fs = std::filesystem;

TEST_CASE("the CUDA probe's memo: its answer under its key, nothing under another") {
  const fs::path dir = fs::temp_directory_path() / ("kagent-probe-memo-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path file = dir / "sandbox" / "cuda-probe.json";

  SandboxPolicy all;
  all.enabled = true;
  SandboxPolicy no_landlock = all;
  no_landlock.disabled.insert(mechanism::kLandlock);
  const std::string key = cuda_probe_key(all);
  CHECK(key != cuda_probe_key(no_landlock));  // another policy probes again
  CHECK(key == cuda_probe_key(all));
  CHECK(key.find(kagent::read_file("/proc/sys/kernel/random/boot_id").substr(0, 36)) != std::string::npos);

  CHECK_FALSE(read_cuda_probe_memo(file, key));  // none yet
  const nlohmann::json fallback = {{"left_out", {"landlock"}}, {"why", "CUDA saw no device with these layers"}};
  write_cuda_probe_memo(file, key, {{"landlock"}, fallback});  // makes its folder
  const auto memo = read_cuda_probe_memo(file, key);
  REQUIRE(memo);
  CHECK(memo->left_out == std::vector<std::string>{"landlock"});
  CHECK(memo->fallback == fallback);
  CHECK_FALSE(read_cuda_probe_memo(file, cuda_probe_key(no_landlock)));

  write_cuda_probe_memo(file, key, {{}, nullptr});  // every layer works
  const auto whole = read_cuda_probe_memo(file, key);
  REQUIRE(whole);
  CHECK(whole->left_out.empty());
  CHECK(whole->fallback.is_null());

  kagent::write_file_atomic(file, "{not json");
  CHECK_FALSE(read_cuda_probe_memo(file, key));
  fs::remove_all(dir);
}
