// nvcc's steps with its two front ends side by side (compiler/nvcc_split.h), on the real nvcc:
// the plan read from -dryrun, a kernel whose host and device halves agree on the module id, a
// compile error that reads exactly as nvcc's own, and the builds that are left to nvcc.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "build_info.h"
#include "common/subprocess.h"
#include "compiler/build_steps.h"
#include "compiler/nvcc_split.h"
#include "temp_dir.h"

using namespace kagent;
namespace fs = std::filesystem;

namespace {

// A kernel in an anonymous namespace: its mangled name carries the module id, so the host's
// registration and the device code only match when both halves used the same id.
const char* kKernel = R"cu(namespace {
__global__ void scale_kernel(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
}  // namespace
void launch(const float* x, float* y, float a, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(x, y, a, n); }
)cu";

const char* kBroken = R"cu(__global__ void k(float* y) { y[threadIdx.x] = undefined_value; }
)cu";

CompileLimits limits() {
  CompileLimits l;
  l.timeout = std::chrono::seconds(300);
  l.deadline = std::chrono::steady_clock::now() + l.timeout;
  return l;
}

std::vector<std::string> nvcc_argv(const fs::path& src, const fs::path& obj, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{build::kNvcc, "-c", src.string(), "-o", obj.string(), "-std=c++17", "-Xptxas", "-v",
                             "-lineinfo"};
  if (extra.empty()) extra = {"-gencode=arch=compute_90a,code=sm_90a"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string dryrun(const std::vector<std::string>& argv, const fs::path& keep) {
  SpawnOptions so;
  so.argv = argv;
  so.argv.insert(so.argv.end(), {"-dryrun", "--keep", "--keep-dir", keep.string()});
  return run_command(so, std::chrono::seconds(60)).output;
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("nvcc's dryrun splits into a host chain, a device chain and the host compile") {
  kagent::testing::TempDir dir("kagent-nvcc-split");
  const fs::path src = dir.write("k.cu", kKernel);
  const auto one = parse_nvcc_dryrun(dryrun(nvcc_argv(src, dir.path() / "k.o"), dir.path() / "keep"));
  REQUIRE(one);
  CHECK(one->host.size() == 2);
  CHECK(one->host[1].find("cudafe++") != std::string::npos);
  CHECK(one->host[1].find("--gen_module_id_file") == std::string::npos);  // reads kagent's id instead
  CHECK(one->device.size() == 4);  // preprocess, cicc, ptxas, fatbinary
  CHECK(one->module_id_file.parent_path() == dir.path() / "keep");
  CHECK(one->source == src);
  CHECK(one->host_compile.find(" -c ") != std::string::npos);
  bool cicc_path = false;
  for (const auto& e : one->environment) cicc_path = cicc_path || e.rfind("CICC_PATH=", 0) == 0;
  CHECK(cicc_path);

  // Two targets: one device chain each, one fatbinary.
  const auto two = parse_nvcc_dryrun(dryrun(
      nvcc_argv(src, dir.path() / "k.o", {"-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_80,code=sm_80"}),
      dir.path() / "keep"));
  REQUIRE(two);
  CHECK(two->device.size() == 7);

  // A host-only file, or text that is no dryrun: left to nvcc.
  const fs::path cpp = dir.write("h.cpp", "int f() { return 1; }\n");
  CHECK_FALSE(parse_nvcc_dryrun(dryrun({build::kNvcc, "-c", cpp.string(), "-o", (dir.path() / "h.o").string()},
                                       dir.path() / "keep")));
  CHECK_FALSE(parse_nvcc_dryrun("nvcc fatal   : Unknown option '-frobnicate'\n"));
  CHECK_FALSE(parse_nvcc_dryrun(""));
}

TEST_CASE("a kernel built with its front ends side by side: both halves carry kagent's module id") {
  kagent::testing::TempDir dir("kagent-nvcc-split");
  const fs::path src = dir.write("k.cu", kKernel);
  const fs::path obj = dir.path() / "k.o";
  SpawnOptions so;
  so.argv = nvcc_argv(src, obj);
  so.env_set = {"TMPDIR=" + dir.str()};
  const RunResult r = run_nvcc_split(so, limits(), dir.path() / "nvcc");
  INFO(r.output);
  REQUIRE(r.exit.exited);
  REQUIRE(r.exit.code == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit.peak_rss_kb > 0);
  CHECK_FALSE(fs::exists(dir.path() / "nvcc"));  // the intermediates are gone

  // ptxas -v speaks as under nvcc (kagent reads registers and spills from it).
  const std::string id = module_id_for(src);
  const std::string device_name = "_GLOBAL__N_" + id + "12scale_kernel";
  CHECK(r.output.find("ptxas info    : Used") != std::string::npos);
  CHECK(r.output.find(device_name) != std::string::npos);
  // The host registers the kernel under the same name.
  CHECK(file_bytes(obj).find(device_name) != std::string::npos);
  CHECK(module_id_for(src) == id);  // the same source, the same id
}

TEST_CASE("a compile error reads exactly as nvcc's, once") {
  kagent::testing::TempDir dir("kagent-nvcc-split");
  const fs::path src = dir.write("bad.cu", kBroken);
  SpawnOptions so;
  so.argv = nvcc_argv(src, dir.path() / "bad.o");
  so.env_set = {"TMPDIR=" + dir.str()};
  const RunResult split = run_nvcc_split(so, limits(), dir.path() / "nvcc");
  const RunResult plain = run_command(so, std::chrono::seconds(120));
  CHECK(split.exit.exited);
  CHECK(split.exit.code != 0);
  CHECK(plain.exit.code != 0);
  CHECK(split.output == plain.output);
  CHECK(split.output.find("undefined_value") != std::string::npos);
}

TEST_CASE("an option nvcc refuses gets nvcc's own words") {
  kagent::testing::TempDir dir("kagent-nvcc-split");
  const fs::path src = dir.write("k.cu", kKernel);
  SpawnOptions so;
  so.argv = nvcc_argv(src, dir.path() / "k.o", {"--frobnicate"});
  const RunResult r = run_nvcc_split(so, limits(), dir.path() / "nvcc");
  CHECK(r.exit.code != 0);
  CHECK(r.output.find("frobnicate") != std::string::npos);
  CHECK(r.output.find("#$") == std::string::npos);
}

TEST_CASE("every compiler run under CompileLimits runs at the compilers' niceness") {
  SpawnOptions so;
  so.argv = {"sh", "-c", "cut -d' ' -f19 /proc/self/stat"};
  const RunResult base = run_command(so, std::chrono::seconds(30));
  REQUIRE(base.succeeded());
  const RunResult r = limits().run(so);
  REQUIRE(r.succeeded());
  CHECK(std::stoi(r.output) == std::min(std::stoi(base.output) + kCompilerNice, 19));
}
