// The kernel-record guards on hand-made CUPTI records (no_kernel, library_share, the late-kernel
// half of side_stream), the findings' filtering by options, and the options JSON.
#include <doctest/doctest.h>

#include <stdexcept>

#include "profiler/kernel_attribution.h"
#include "worker/guards/guard_kernels.h"
#include "worker/protocol/guard_options.h"
#include "worker/guards/guard_side_stream.h"
#include "doctest_torch.h"  // last: doctest's CHECK over c10's

using namespace kagent;
using namespace kagent::worker;
using profiler::KernelRecord;

namespace {
KernelRecord kernel(const std::string& name, uint64_t start_us, uint64_t end_us, uint32_t stream = 7) {
  KernelRecord r;
  r.name = r.mangled = name;
  r.start_ns = start_us * 1000;
  r.end_ns = end_us * 1000;
  r.stream_id = stream;
  return r;
}

const std::string kAtenGelu = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(int, float*)";
const std::string kCublas = "nvjet_tst_128x64_64x4_2x1_v_bz_TNT";
const std::string kOwn = "void gelu_kernel(float const*, float*, long)";
}  // namespace

TEST_CASE("no_kernel: only library kernels ran (a decoy is defined but never launched)") {
  const std::vector<KernelRecord> decoy = {kernel(kAtenGelu, 0, 30)};
  const auto f = check_no_kernel(decoy, profiler::attribute_kernels(decoy, {kOwn}));
  REQUIRE(f);
  CHECK(f->name == "no_kernel");
  CHECK(f->message.find("aten") != std::string::npos);
  CHECK(check_no_kernel({}, profiler::attribute_kernels({}, {}))->message.find("no kernel at all") != std::string::npos);

  const std::vector<KernelRecord> own = {kernel(kOwn, 0, 30)};
  CHECK_FALSE(check_no_kernel(own, profiler::attribute_kernels(own, {kOwn})));
  CHECK_FALSE(check_no_kernel(own, profiler::attribute_kernels(own, {})));  // kernelbench: no names, not a library
  // A kernel whose name fails to match the ptxas list but that no library claims still counts.
  CHECK_FALSE(check_no_kernel(own, profiler::attribute_kernels(own, {"void other_kernel(int)"})));
}

TEST_CASE("library_share: cuBLAS doing the GEMM next to a small own epilogue") {
  GuardOptions opts;
  const std::vector<KernelRecord> hack = {kernel(kCublas, 0, 500), kernel(kOwn, 500, 520)};
  const auto f = check_library_share(hack, profiler::attribute_kernels(hack, {kOwn}), opts);
  REQUIRE(f);
  CHECK(f->name == "library_share");
  CHECK(f->message.find("own kernels took 4%") != std::string::npos);
  CHECK(f->message.find("cublas: nvjet") != std::string::npos);

  const std::vector<KernelRecord> fine = {kernel(kAtenGelu, 0, 100), kernel(kOwn, 100, 300)};
  CHECK_FALSE(check_library_share(fine, profiler::attribute_kernels(fine, {kOwn}), opts));
  // Library kernels that are overhead-sized (a fill next to a tiny kernel) are not "a library doing the work".
  const std::vector<KernelRecord> tiny = {kernel(kAtenGelu, 0, 6), kernel(kOwn, 6, 8)};
  CHECK_FALSE(check_library_share(tiny, profiler::attribute_kernels(tiny, {kOwn}), opts));
  opts.library_min_us = 1;
  CHECK(check_library_share(tiny, profiler::attribute_kernels(tiny, {kOwn}), opts));
  opts.library_share_min = 0.2;
  CHECK_FALSE(check_library_share(tiny, profiler::attribute_kernels(tiny, {kOwn}), opts));
}

TEST_CASE("library_share: a share measured beside siblings near the bound is traced again with the GPU alone") {
  GuardOptions opts;  // bound 0.5
  CHECK(library_share_needs_recheck(0.5, opts));
  CHECK(library_share_needs_recheck(0.35, opts));  // l2_p26_gpto1's, which flipped between runs
  CHECK(library_share_needs_recheck(0.69, opts));
  CHECK_FALSE(library_share_needs_recheck(0.14, opts));  // far below: rejected either way
  CHECK_FALSE(library_share_needs_recheck(0.95, opts));  // far above: kept either way
  CHECK_FALSE(library_share_needs_recheck(std::nullopt, opts));  // no trace: nothing to measure again
  opts.library_share_min = 0.8;
  CHECK(library_share_needs_recheck(0.95, opts));
  opts.disabled.insert(guard::kLibraryShare);
  CHECK_FALSE(library_share_needs_recheck(0.5, opts));  // the guard is off
}

TEST_CASE("CUPTI unavailable: both kernel guards become flags saying so") {
  GuardOptions opts;
  auto flags = kernel_guards_unavailable("CUPTI_ERROR_NOT_INITIALIZED", opts);
  REQUIRE(flags.size() == 2);
  CHECK(flags[0].action == "flag");
  CHECK(flags[1].message == "unavailable: CUPTI_ERROR_NOT_INITIALIZED");
  opts.disabled.insert("library_share");
  CHECK(kernel_guards_unavailable("x", opts).size() == 1);
}

TEST_CASE("side_stream: a kernel ending after the current stream was done, beyond the margin") {
  const uint64_t done_ns = 100'000;  // 100 us
  const std::vector<KernelRecord> joined = {kernel(kOwn, 10, 99), kernel(kOwn, 20, 120, 9)};  // 20 us late: skew
  CHECK_FALSE(check_late_kernels(joined, {done_ns, false}, 50));
  const std::vector<KernelRecord> side = {kernel(kOwn, 10, 99), kernel(kOwn, 20, 400, 9)};
  const auto f = check_late_kernels(side, {done_ns, false}, 50);
  REQUIRE(f);
  CHECK(f->name == "side_stream");
  CHECK(f->message.find("1 kernel(s)") != std::string::npos);
  CHECK(f->message.find("stream 9") != std::string::npos);
  CHECK(f->message.find("300.0 us after the current stream was seen done") != std::string::npos);
}

TEST_CASE("side_stream against the GPU marker: a few microseconds late is already a finding") {
  const uint64_t marker_ns = 100'000;
  // Work the current stream waited for ends before its next operation starts.
  const std::vector<KernelRecord> joined = {kernel(kOwn, 10, 99), kernel(kOwn, 20, 100, 9)};
  CHECK_FALSE(check_late_kernels(joined, {marker_ns, true}, 2));
  // A softmax finishing 5 us after the marker: within the host fallback's margin, not the marker's.
  const std::vector<KernelRecord> side = {kernel(kOwn, 10, 99), kernel(kOwn, 20, 105, 9)};
  CHECK_FALSE(check_late_kernels(side, {marker_ns, false}, 10));
  const auto f = check_late_kernels(side, {marker_ns, true}, 2);
  REQUIRE(f);
  CHECK(f->message.find("5.0 us after the current stream's next operation began on the GPU") != std::string::npos);
}

TEST_CASE("guard options from JSON: defaults, off switch, single guards off, unknown names refused") {
  const GuardOptions d = guard_options_from_json(nullptr);
  CHECK(d.enabled);
  CHECK(d.on("no_kernel"));
  CHECK(d.library_share_min == 0.5);
  CHECK(d.precision_ratio == 64);
  CHECK(d.speedup_flag == 10);
  CHECK_FALSE(guard_options_from_json(false).on("no_kernel"));
  const GuardOptions o = guard_options_from_json(
      {{"disable", {"leftover_memory"}}, {"library_share_min", 0.3}, {"speedup_flag", 20}, {"precision_floor", 1e-4}});
  CHECK(o.enabled);
  CHECK_FALSE(o.on("leftover_memory"));
  CHECK(o.on("cached_results"));
  CHECK(o.library_share_min == 0.3);
  CHECK(o.speedup_flag == 20);
  CHECK(o.precision_floor == 1e-4);
  CHECK_THROWS_AS(guard_options_from_json({{"disable", {"no_such_guard"}}}), std::invalid_argument);
  CHECK_THROWS_AS(guard_options_from_json(3), std::invalid_argument);
  // unjoined_stream runs by default; switched off, that travels with the request.
  CHECK(d.unjoined_stream_check);
  const GuardOptions asked = guard_options_from_json({{"unjoined_stream_check", false}});
  CHECK_FALSE(asked.unjoined_stream_check);
  CHECK_FALSE(guard_options_from_json(nlohmann::json(asked)).unjoined_stream_check);
  CHECK_FALSE(guard_options_from_json({{"disable", {"unjoined_stream"}}}).on("unjoined_stream"));
}

TEST_CASE("no_kernel: an answer with no code that could launch a kernel owns none of the unclaimed ones") {
  // l3_p30_gemini15flash: the reference in PyTorch, load_inline imported and never called.
  // A kernel that no library pattern claims used to count as the answer's.
  const std::string kUnclaimed = "engine_layout_kernel";  // no library pattern claims it
  const std::vector<KernelRecord> records = {kernel(kCublas, 0, 500), kernel(kUnclaimed, 500, 520)};
  CHECK_FALSE(check_no_kernel(records, profiler::attribute_kernels(records, {})));  // as before: unclaimed counts for the answer
  const auto attribution = profiler::attribute_kernels(records, {}, profiler::Unclaimed::NoOnes);
  const auto f = check_no_kernel(records, attribution);
  REQUIRE(f);
  CHECK(f->message.find("unclaimed: engine_layout_kernel") != std::string::npos);
  CHECK(*own_kernel_share(records, attribution) == 0.0);
}
