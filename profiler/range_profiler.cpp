#include "profiler/range_profiler.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <memory>
#include <sstream>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "cuda/cuda_error.h"
#include "profiler/cupti_check.h"
#include "profiler/profiler_error.h"

namespace kagent::profiler {

std::vector<std::string> default_metrics() {
  return {metric::kDuration,
          metric::kDramRead,
          metric::kDramWrite,
          metric::kDramPct,
          metric::kWarpsActive,
          metric::kIssueActive,
          metric::kIpc,
          metric::kL1Hit,
          std::string(metric::kTensorPct) + "|sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
          metric::kFadd,
          metric::kFmul,
          metric::kFfma,
          metric::kDadd,
          metric::kDmul,
          metric::kDfma,
          metric::kHadd,
          metric::kHmul,
          metric::kHfma,
          metric::kFfmaPeak,
          metric::kDfmaPeak,
          metric::kSmClock,
          metric::kDramPeak,
          metric::kDramClock,
          metric::kSmPct};
}

// Types the kept host-side setup (RangeProfiler::Setup) holds; internal to this file.
namespace range_detail {

// The profiler host object: metric names, config images, evaluation of counter data.
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<uint8_t>& availability) {
    auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.data();
    KAGENT_CUDA_CHECK(cuptiProfilerHostInitialize(&p));
    host_ = p.pHostObject;
  }
  ~HostObject() {
    auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = host_;
    (void)cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  bool knows(const std::string& name) {
    auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
    p.pHostObject = host_;
    p.pMetricName = name.c_str();
    const CUptiResult r = cuptiProfilerHostGetMetricProperties(&p);
    if (r == CUPTI_ERROR_INVALID_METRIC_NAME) return false;
    KAGENT_CUDA_CHECK(r);
    return true;
  }

  // Adds the metrics (additive: one set per host object) and returns the config image.
  std::vector<uint8_t> config_image(std::vector<const char*> names) {
    auto add = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = host_;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    KAGENT_CUDA_CHECK(cuptiProfilerHostConfigAddMetrics(&add));
    auto size = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = host_;
    KAGENT_CUDA_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
    std::vector<uint8_t> image(size.configImageSize);
    auto get = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    get.pHostObject = host_;
    get.configImageSize = image.size();
    get.pConfigImage = image.data();
    KAGENT_CUDA_CHECK(cuptiProfilerHostGetConfigImage(&get));
    return image;
  }

  std::vector<double> evaluate(const std::vector<uint8_t>& counter_data, size_t range,
                               std::vector<const char*> names) {
    std::vector<double> values(names.size(), 0.0);
    auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    p.pHostObject = host_;
    p.pCounterDataImage = counter_data.data();
    p.counterDataImageSize = counter_data.size();
    p.rangeIndex = range;
    p.ppMetricNames = names.data();
    p.numMetrics = names.size();
    p.pMetricValues = values.data();
    KAGENT_CUDA_CHECK(cuptiProfilerHostEvaluateToGpuValues(&p));
    return values;
  }

 private:
  CUpti_Profiler_Host_Object* host_ = nullptr;
};

struct Choice {
  std::string key;     // the entry's first name: what the result is keyed by
  std::string actual;  // the name this chip knows
};

}  // namespace range_detail

using range_detail::Choice;
using range_detail::HostObject;

namespace {

// Driver API entry points through the runtime (cuda::driver_entry_point).
template <class Fn>
Fn driver_entry(const char* symbol) {
  void* fn = cuda::driver_entry_point(symbol);
  if (!fn) throw ProfilerError(std::string("the driver lacks ") + symbol);
  return reinterpret_cast<Fn>(fn);
}

struct CurrentContext {
  CUcontext ctx = nullptr;
  CUdevice device = 0;
  int ordinal = 0;
};

CurrentContext current_context() {
  CurrentContext c;
  KAGENT_CUDA_CHECK(cudaGetDevice(&c.ordinal));
  KAGENT_CUDA_CHECK(cudaFree(nullptr));  // makes the device's primary context current
  const auto get_ctx = driver_entry<CUresult (*)(CUcontext*)>("cuCtxGetCurrent");
  const auto get_dev = driver_entry<CUresult (*)(CUdevice*)>("cuCtxGetDevice");
  KAGENT_CUDA_CHECK(get_ctx(&c.ctx));
  if (!c.ctx) throw ProfilerError("no current CUDA context");
  KAGENT_CUDA_CHECK(get_dev(&c.device));
  return c;
}

// cuptiProfilerInitialize ... cuptiProfilerDeInitialize.
class ProfilerInit {
 public:
  ProfilerInit() {
    auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    KAGENT_CUDA_CHECK(cuptiProfilerInitialize(&p));
  }
  ~ProfilerInit() {
    auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
    (void)cuptiProfilerDeInitialize(&p);
  }
  ProfilerInit(const ProfilerInit&) = delete;
  ProfilerInit& operator=(const ProfilerInit&) = delete;
};

// Empty when the device supports range profiling, else which part of the setup does not.
std::string support_problem(CUdevice device) {
  auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  KAGENT_CUDA_CHECK(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return {};
  std::string why;
  auto note = [&](CUpti_Profiler_Support_Level level, const char* what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED || level == CUPTI_PROFILER_CONFIGURATION_DISABLED)
      why += std::string(why.empty() ? "" : ", ") + what +
             (level == CUPTI_PROFILER_CONFIGURATION_DISABLED ? " (profiling disabled)" : " (unsupported)");
  };
  note(p.architecture, "GPU architecture");
  note(p.sli, "SLI");
  note(p.vGpu, "vGPU");
  note(p.confidentialCompute, "confidential computing");
  note(p.cmp, "CMP device");
  note(p.wsl, "WSL");
  return why.empty() ? "cuptiProfilerDeviceSupported: not supported on this device" : "cuptiProfilerDeviceSupported: " + why;
}

std::string chip_name(int ordinal) {
  auto p = KAGENT_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  p.deviceIndex = static_cast<size_t>(ordinal);
  KAGENT_CUDA_CHECK(cuptiDeviceGetChipName(&p));
  return p.pChipName ? p.pChipName : "";
}

std::vector<uint8_t> counter_availability(CUcontext ctx) {
  auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  p.ctx = ctx;
  KAGENT_CUDA_CHECK(cuptiProfilerGetCounterAvailability(&p));  // size first
  std::vector<uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  KAGENT_CUDA_CHECK(cuptiProfilerGetCounterAvailability(&p));
  image.resize(p.counterAvailabilityImageSize);
  return image;
}

size_t num_passes(std::vector<uint8_t>& config) {
  auto p = KAGENT_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  KAGENT_CUDA_CHECK(cuptiProfilerHostGetNumOfPasses(&p));
  return p.numOfPasses;
}

// cuptiRangeProfilerEnable ... cuptiRangeProfilerDisable on one context.
class RangeSession {
 public:
  explicit RangeSession(CUcontext ctx) {
    auto p = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    p.ctx = ctx;
    KAGENT_CUDA_CHECK(cuptiRangeProfilerEnable(&p));
    object_ = p.pRangeProfilerObject;
  }
  ~RangeSession() {
    auto p = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = object_;
    (void)cuptiRangeProfilerDisable(&p);
  }
  RangeSession(const RangeSession&) = delete;
  RangeSession& operator=(const RangeSession&) = delete;
  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

std::vector<uint8_t> counter_data_image(CUpti_RangeProfiler_Object* object, std::vector<const char*> names,
                                        size_t max_ranges) {
  auto size = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = max_ranges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_ranges);
  KAGENT_CUDA_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
  std::vector<uint8_t> image(size.counterDataSize, 0);
  auto init = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = object;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  KAGENT_CUDA_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
  return image;
}

// A kept session's image, emptied for the next call: the bytes CUPTI wrote when it initialised
// it, copied back. The image is a self-contained blob (Nsight saves them as files); CUPTI's own
// initialisation of the 256-range image, with the zeroing before it, took 6-9 ms of every
// profile on an H200 (a quarter of the profile phase), the copy well under 1 ms.
void reinitialize_counter_data(const std::vector<uint8_t>& pristine, std::vector<uint8_t>& image) {
  image.assign(pristine.begin(), pristine.end());
}

// The whole call's one user range (RangeProfiler::run with whole_call).
void push_range(CUpti_RangeProfiler_Object* object) {
  auto p = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
  p.pRangeProfilerObject = object;
  p.pRangeName = "call";
  KAGENT_CUDA_CHECK(cuptiRangeProfilerPushRange(&p));
}

CUptiResult pop_range(CUpti_RangeProfiler_Object* object) {
  auto p = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
  p.pRangeProfilerObject = object;
  return cuptiRangeProfilerPopRange(&p);
}

// Returns whether CUPTI has all passes it needs.
bool stop(CUpti_RangeProfiler_Object* object) {
  auto p = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  p.pRangeProfilerObject = object;
  KAGENT_CUDA_CHECK(cuptiRangeProfilerStop(&p));
  return p.isAllPassSubmitted != 0;
}

std::vector<const char*> names_of(const std::vector<Choice>& chosen) {
  std::vector<const char*> out;
  for (const auto& c : chosen) out.push_back(c.actual.c_str());
  return out;
}

std::vector<std::string> split_alternatives(const std::string& entry) {
  std::vector<std::string> out;
  std::stringstream in(entry);
  for (std::string part; std::getline(in, part, '|');)
    if (!part.empty()) out.push_back(part);
  return out;
}

}  // namespace

// What is kept across calls on one device: the profiler's initialisation, the chip, its
// counter availability, the metrics chosen for the pass budget, their config image and the
// host object that evaluates counter data for them; with keep_session also the range
// profiler session and its counter data image. Members are destroyed bottom-up: the session
// before its counter data and both before the profiler's deinitialisation.
struct RangeProfiler::Setup {
  std::unique_ptr<ProfilerInit> init;
  int ordinal = -1;
  CUcontext ctx = nullptr;
  std::string unsupported;  // why the device cannot range-profile; empty when it can
  std::string chip;
  std::vector<uint8_t> availability;
  std::unique_ptr<HostObject> host;
  std::vector<Choice> chosen;
  std::vector<std::string> dropped;
  std::vector<uint8_t> config;
  size_t passes = 0;
  // One counter data image per capacity (ranges), made for the session below: the image and
  // its bytes as CUPTI initialised them.
  struct CounterImage {
    std::vector<uint8_t> data, initialised;
  };
  std::map<size_t, CounterImage> images;
  std::unique_ptr<RangeSession> session;
  bool session_whole_call = false;  // the range mode the session was configured with
};

namespace {

std::unique_ptr<RangeProfiler::Setup> make_setup(const CurrentContext& cc, const RangeProfilerOptions& opts) {
  auto s = std::make_unique<RangeProfiler::Setup>();
  s->init = std::make_unique<ProfilerInit>();
  s->ordinal = cc.ordinal;
  s->ctx = cc.ctx;
  s->unsupported = support_problem(cc.device);
  if (!s->unsupported.empty()) return s;
  s->chip = chip_name(cc.ordinal);
  s->availability = counter_availability(cc.ctx);
  // Which requested metrics this chip knows, then as many as fit the pass budget.
  s->host = std::make_unique<HostObject>(s->chip, s->availability);
  for (const auto& entry : opts.metrics) {
    const auto alternatives = split_alternatives(entry);
    if (alternatives.empty()) continue;
    bool found = false;
    for (const auto& name : alternatives) {
      if (s->host->knows(name)) {
        s->chosen.push_back({alternatives.front(), name});
        found = true;
        break;
      }
    }
    if (!found) s->dropped.push_back(entry + " (unknown on " + s->chip + ")");
  }
  const size_t max_passes = std::max<size_t>(opts.max_passes, 1);
  while (true) {
    if (s->chosen.empty()) throw ProfilerError("no requested metric is available within the pass budget");
    s->config = s->host->config_image(names_of(s->chosen));
    s->passes = num_passes(s->config);
    if (s->passes <= max_passes) break;
    s->dropped.push_back(s->chosen.back().actual + " (" + std::to_string(s->passes) + " passes with it)");
    s->chosen.pop_back();
    s->host.reset();  // metrics accumulate in a host object: start a fresh one without the dropped metric
    s->host = std::make_unique<HostObject>(s->chip, s->availability);
  }
  return s;
}

}  // namespace

RangeProfiler::RangeProfiler(RangeProfilerOptions options) : options_(std::move(options)) {}
RangeProfiler::~RangeProfiler() = default;

namespace {

// Wall time of the steps of one profile() call, for the cost benchmark.
class StepClock {
 public:
  explicit StepClock(std::map<std::string, double>& out) : out_(out) {}
  void mark(const char* step) {
    const auto now = std::chrono::steady_clock::now();
    out_[step] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  std::map<std::string, double>& out_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

size_t RangeProfiler::capacity_for(size_t expected_launches) const {
  const size_t max_ranges = std::max<size_t>(options_.max_ranges, 1);
  if (!options_.size_to_launches || expected_launches == 0) return max_ranges;
  // Room for twice the launches seen: a call may launch a few more than the traced one did.
  return std::min(max_ranges, std::max<size_t>(16, std::bit_ceil(2 * expected_launches)));
}

void RangeProfiler::run(const std::function<void()>& run_once, const std::function<void()>& before_pass,
                        size_t capacity, bool whole_call, RangeProfileResult& res) {
  StepClock clock(res.step_seconds);
  const CurrentContext cc = current_context();
  // Kept for later calls: initialisation, the chip's configuration and the host object cost
  // far more than the profiled call itself (about 0.4 s on an H200), and a long-lived worker
  // profiles every correct candidate.
  if (!setup_ || setup_->ordinal != cc.ordinal || setup_->ctx != cc.ctx) {
    setup_.reset();
    setup_ = make_setup(cc, options_);
  }
  clock.mark("setup");
  Setup& s = *setup_;
  if (!s.unsupported.empty()) {
    res.status = "unsupported";
    res.reason = s.unsupported;
    return;
  }
  res.chip = s.chip;
  res.dropped = s.dropped;
  res.passes = s.passes;
  const std::vector<const char*> names = names_of(s.chosen);

  // The session's first Start is what costs (about 0.3 s on an H200), so it is kept by default;
  // timed medians were measured unchanged with it enabled in between.
  // A session configured for one range mode refuses the other (CUPTI 13 on an H200: the first
  // whole-call profile after per-launch ones failed, and the next worked only in a new session):
  // a mode switch ends the session, at the cost of a first Start.
  if (s.session && s.session_whole_call != whole_call) s.session.reset();
  if (!s.session) {
    s.images.clear();  // made for the session that ended
    s.session = std::make_unique<RangeSession>(cc.ctx);
    s.session_whole_call = whole_call;
  }
  auto found = s.images.find(capacity);
  if (found == s.images.end()) {
    Setup::CounterImage image;
    image.data = counter_data_image(s.session->get(), names, capacity);
    image.initialised = image.data;
    found = s.images.emplace(capacity, std::move(image)).first;
  } else {
    reinitialize_counter_data(found->second.initialised, found->second.data);
  }
  std::vector<uint8_t>& counter_data = found->second.data;
  res.capacity = capacity;
  res.image_bytes = counter_data.size();
  struct SessionScope {  // ends the session when this call is done, unless it is kept
    Setup& s;
    bool keep;
    ~SessionScope() {
      if (!keep) s.session.reset();
    }
  } scope{s, options_.keep_session};
  clock.mark("session");
  auto set = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  set.pRangeProfilerObject = s.session->get();
  set.configSize = s.config.size();
  set.pConfig = s.config.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = whole_call ? CUPTI_UserRange : CUPTI_AutoRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = capacity;
  set.numNestingLevels = 1;  // auto ranges do not nest; the whole call's one range has nothing inside
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  KAGENT_CUDA_CHECK(cuptiRangeProfilerSetConfig(&set));
  clock.mark("config");

  bool all_submitted = false;
  for (size_t pass = 0; !all_submitted && pass <= s.passes; ++pass) {
    if (before_pass) before_pass();
    clock.mark("flush");
    auto start = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = s.session->get();
    KAGENT_CUDA_CHECK(cuptiRangeProfilerStart(&start));
    clock.mark("start");
    bool pushed = false;
    try {
      if (whole_call) {
        push_range(s.session->get());
        pushed = true;
      }
      run_once();
      KAGENT_CUDA_CHECK(cudaDeviceSynchronize());
      if (whole_call) {
        pushed = false;
        KAGENT_CUDA_CHECK(pop_range(s.session->get()));
      }
      clock.mark("call");
    } catch (...) {
      if (pushed) (void)pop_range(s.session->get());
      auto p = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
      p.pRangeProfilerObject = s.session->get();
      (void)cuptiRangeProfilerStop(&p);
      throw;
    }
    all_submitted = stop(s.session->get());
    clock.mark("stop");
  }
  if (!all_submitted) throw ProfilerError("the range profiler still wanted passes after " + std::to_string(s.passes));

  auto decode = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = s.session->get();
  KAGENT_CUDA_CHECK(cuptiRangeProfilerDecodeData(&decode));
  res.ranges_dropped = decode.numOfRangeDropped;
  clock.mark("decode");

  auto info = KAGENT_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  KAGENT_CUDA_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
  for (size_t i = 0; i < info.numTotalRanges; ++i) {
    const std::vector<double> values = s.host->evaluate(counter_data, i, names);
    std::map<std::string, double> range;
    for (size_t m = 0; m < s.chosen.size(); ++m) range[s.chosen[m].key] = values[m];
    res.ranges.push_back(std::move(range));
  }
  for (const auto& c : s.chosen) res.metrics.push_back(c.actual);
  res.scope = whole_call ? "call" : "kernel";
  res.available = true;
  res.status = "ok";
  clock.mark("evaluate");
}

RangeProfileResult RangeProfiler::profile(const std::function<void()>& run_once,
                                          const std::function<void()>& before_pass, size_t expected_launches) {
  const size_t per_kernel = options_.per_kernel_launches;  // 0: no limit
  if (per_kernel > 0 && expected_launches > per_kernel) return profile_once(run_once, before_pass, 1, true);
  const size_t capacity = capacity_for(expected_launches);
  RangeProfileResult res = profile_once(run_once, before_pass, capacity, false);
  const auto again = [&](size_t room, bool whole_call) {  // the result of a later try, with every try's seconds
    const double before = res.seconds;
    res = profile_once(run_once, before_pass, room, whole_call);
    res.seconds += before;
  };
  const size_t max_ranges = capacity_for(0);
  // A full image: this call may have launched more than the image sized to the hint held (CUPTI
  // drops the launches past maxRangesPerPass and, on an H200 with CUDA 13, does not count them in
  // numOfRangeDropped). Once more with room for all.
  if (res.available && capacity < max_ranges && (res.ranges_dropped > 0 || res.ranges.size() >= capacity))
    again(max_ranges, false);
  // More launches than the hint said, and more than per_kernel_launches: the call is one the hint
  // would have sent to a whole-call range. So is one that came back with 32 ranges or more:
  // CUPTI may have dropped launches past its own limit unreported (32 of 67 with the worker's
  // metrics). Once more as one range, for totals of every launch.
  constexpr size_t kAutoRangesCuptiMayCut = 32;
  const size_t got = res.ranges.size();
  if (res.available && per_kernel > 0 && got > expected_launches && (got > per_kernel || got >= kAutoRangesCuptiMayCut))
    again(1, true);
  return res;
}

RangeProfileResult RangeProfiler::profile_once(const std::function<void()>& run_once,
                                               const std::function<void()>& before_pass, size_t capacity,
                                               bool whole_call) {
  const auto t0 = std::chrono::steady_clock::now();
  RangeProfileResult res;
  try {
    run(run_once, before_pass, capacity, whole_call, res);
  } catch (const cuda::ContextLost&) {
    setup_.reset();
    throw;  // the worker must be replaced: not a profiler matter
  } catch (const cuda::Error& e) {
    const bool cupti = e.api() == cuda::Api::Cupti;
    const bool busy = cupti && static_cast<CUptiResult>(e.code()) == CUPTI_ERROR_HARDWARE_BUSY;
    const bool refused = cupti && counters_not_permitted(static_cast<CUptiResult>(e.code()));
    res = RangeProfileResult{};
    res.status = busy ? "busy" : refused ? "not_permitted" : "error";
    // Busy is not a matter of privileges: the counters are one per GPU, and a kept session
    // (keep_session) holds them until its worker ends.
    res.reason = busy ? std::string(kCountersBusy) + " (" + e.what() + ")" : e.what();
    if (busy && setup_) {
      // Another process holds the counters (CUPTI says so at the session's Enable or Start, where
      // this profiler's session had ended: keep_session off, a mode switch). The host side is
      // sound and cost up to 0.4 s to build: only the session goes, with the images made for it,
      // and the next profile asks again (22 ms an attempt on an H200).
      setup_->session.reset();
      setup_->images.clear();
    } else {
      setup_.reset();  // a failure may leave the host side half built; start over next time
    }
  } catch (const ProfilerError& e) {
    res = RangeProfileResult{};
    res.status = "error";
    res.reason = e.what();
    setup_.reset();
  }
  // Anything else is the profiled call's own exception (the candidate's): it passes through.
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

RangeProfileResult profile_ranges(const std::function<void()>& run_once, const std::function<void()>& before_pass,
                                  const RangeProfilerOptions& options, size_t expected_launches) {
  RangeProfilerOptions once = options;
  once.keep_session = false;  // nothing to keep it for
  return RangeProfiler(once).profile(run_once, before_pass, expected_launches);
}

}  // namespace kagent::profiler
