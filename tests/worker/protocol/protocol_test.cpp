// The worker protocol: every op has a name and parses back; requests and replies survive a JSON
// round trip with every field; options written by one side are read the same by the other.
#include <doctest/doctest.h>

#include "worker/protocol/protocol.h"

using namespace kagent;
using namespace kagent::protocol;

namespace {

EvalOptions full_options() {
  EvalOptions o;
  o.trials = 7;
  o.seed = 3;
  o.tolerance = {1e-3, std::nullopt};
  o.measure = false;
  o.eager_baseline = true;
  o.compiled_baseline = false;
  o.timing.min_samples = 11;
  o.timing.max_time_s = 2.5;
  o.timing.flush_l2 = false;
  o.timing.sample = TimingSample::Gpu;
  o.cache_dir = "/tmp/c";
  o.guards.disabled = {"no_kernel", "threads"};
  o.guards.speedup_flag = 20;
  o.profile = false;
  o.speedup_rounds = 5;
  return o;
}

template <class T>
T round_trip(const T& v) {
  return nlohmann::json::parse(nlohmann::json(v).dump()).get<T>();
}

}  // namespace

TEST_CASE("every op has a name, and a request line names its op") {
  for (const auto& [op, name] : kOpNames) CHECK(op_of({{"op", name}}) == op);
  CHECK_THROWS_AS(op_of({{"op", "frobnicate"}}), std::invalid_argument);
  CHECK_THROWS_AS(op_of(nlohmann::json::object()), std::invalid_argument);
  const auto line = request_line(LoadProblemRequest{"/p.py"}, 9);
  CHECK(line["op"] == "load_problem");
  CHECK(line["id"] == 9);
  CHECK(line["path"] == "/p.py");
  CHECK(request_line(ShutdownRequest{}, 1)["op"] == "shutdown");
  CHECK(request_line(BaselinesRequest{}, 1)["op"] == "baselines");
}

TEST_CASE("EvalOptions: every field survives, absent fields keep their defaults") {
  const EvalOptions o = round_trip(full_options());
  CHECK(o.trials == 7);
  CHECK(o.seed == 3);
  CHECK(o.tolerance.atol == 1e-3);
  CHECK_FALSE(o.tolerance.rtol.has_value());
  CHECK_FALSE(o.measure);
  CHECK_FALSE(o.compiled_baseline);
  CHECK(o.timing.min_samples == 11);
  CHECK(o.timing.max_time_s == 2.5);
  CHECK_FALSE(o.timing.flush_l2);
  CHECK(o.timing.sample == TimingSample::Gpu);
  CHECK(o.cache_dir == "/tmp/c");
  CHECK(o.guards.disabled == std::set<std::string>{"no_kernel", "threads"});
  CHECK(o.guards.speedup_flag == 20);
  CHECK_FALSE(o.profile);
  CHECK(o.speedup_rounds == 5);
  const EvalOptions d = nlohmann::json::object().get<EvalOptions>();
  CHECK(d.trials == EvalOptions{}.trials);
  CHECK(d.timing.max_noise == MeasureConfig{}.max_noise);
  CHECK(d.guards.enabled);
  CHECK(d.speedup_rounds == 0);
  for (int bad : {1, -2, kMaxSpeedupRounds + 1})  // one round has no interval
    CHECK_THROWS_AS((nlohmann::json{{"speedup_rounds", bad}}.get<EvalOptions>()), std::invalid_argument);
  CHECK(nlohmann::json{{"guards", false}}.get<EvalOptions>().guards.enabled == false);
  CHECK_THROWS_AS((nlohmann::json{{"guards", {{"disable", {"no_such_guard"}}}}}.get<EvalOptions>()),
                  std::invalid_argument);
}

TEST_CASE("evaluate and baselines requests, and their replies") {
  EvaluateRequest e{"/p.py", CandidateRef{"cuda", "/a.so", "kagent_x::forward", "", {"k1", "k2"}}, full_options(), std::nullopt};
  const auto back = round_trip(e);
  CHECK(back.problem == "/p.py");
  CHECK(back.candidate.format == "cuda");
  CHECK(back.candidate.artifact == "/a.so");
  CHECK(back.candidate.op_name == "kagent_x::forward");
  CHECK(back.candidate.kernels == std::vector<std::string>{"k1", "k2"});
  CHECK(back.options.trials == 7);
  CHECK_FALSE(back.trusted_eager_ms);
  CHECK_FALSE(nlohmann::json(e).contains("trusted_eager_ms"));
  e.trusted_eager_ms = 0.1 + 0.2;  // not a short decimal: the worker compares it exactly
  CHECK(round_trip(e).trusted_eager_ms == 0.1 + 0.2);
  const auto kb = round_trip(CandidateRef{"kernelbench", "", "", "/c.py", {},
                                          {PrebuiltExtension{"k3y", "/e.so", "kagent_e", {"f", "g"}, "/b.so"},
                                           PrebuiltExtension{"k4y", "/d.so", "kagent_d", {"h"}, ""}},
                                          {{"dyn", "cpp_sources is not a constant"}}});
  CHECK(kb.path == "/c.py");
  CHECK(kb.artifact.empty());
  REQUIRE(kb.extensions.size() >= 1);
  CHECK(kb.extensions[0].key == "k3y");
  CHECK(kb.extensions[0].library == "/e.so");
  CHECK(kb.extensions[0].op_namespace == "kagent_e");
  CHECK(kb.extensions[0].functions == std::vector<std::string>{"f", "g"});
  CHECK(kb.extensions[0].binding == "/b.so");
  REQUIRE(kb.extensions.size() == 2);
  CHECK(kb.extensions[1].binding.empty());
  CHECK_FALSE(nlohmann::json(kb.extensions[1]).contains("binding"));
  CHECK(kb.extension_reasons.at("dyn") == "cpp_sources is not a constant");

  BaselinesReply r;
  r.eager = TimingStats{};
  r.eager->median_ms = 2.74;
  r.compiled_error = "inductor failed";
  r.cache_hit = true;
  const auto rb = round_trip(r);
  REQUIRE(rb.eager.has_value());
  CHECK(rb.eager->median_ms == 2.74);
  CHECK_FALSE(rb.compiled.has_value());
  CHECK(rb.compiled_error == "inductor failed");
  CHECK(rb.cache_hit);
}

TEST_CASE("hello carries the device; an unavailable one reads back as such") {
  HelloReply h;
  h.device.available = true;
  h.device.name = "NVIDIA H200";
  h.device.cc_major = 9;
  h.device.measured_dram_gbps = 4213.6;
  h.pid = 42;
  h.sandbox = {{"enabled", true}};
  const auto back = round_trip(h);
  CHECK(back.device.available);
  CHECK(back.device.name == "NVIDIA H200");
  CHECK(back.device.cc_major == 9);
  CHECK(back.device.measured_dram_gbps == 4213.6);
  CHECK(back.pid == 42);
  CHECK(back.sandbox["enabled"] == true);
  CHECK(back.timing_lock.empty());
  h.timing_lock = "/tmp/kagent-gpu-admission/GPU-1.timing";
  CHECK(round_trip(h).timing_lock == h.timing_lock);
  CHECK_FALSE(nlohmann::json(nullptr).get<DeviceInfo>().available);
  CHECK_FALSE(round_trip(DeviceInfo{}).available);
}

TEST_CASE("reply lines: ok with an optional fatal mark, errors with a kind") {
  const auto ok = ok_line(PrepareReply{}, true);
  CHECK(ok["ok"] == true);
  CHECK(ok["fatal"] == true);
  CHECK_FALSE(ok_line(PrepareReply{}).contains("fatal"));
  const auto err = error_line("problem_load_error", "SyntaxError");
  CHECK(err["ok"] == false);
  const auto e = err["error"].get<ErrorReply>();
  CHECK(e.kind == "problem_load_error");
  CHECK(e.message == "SyntaxError");
}

TEST_CASE("an evaluation result keeps its phases through the protocol") {
  EvalResult r;
  r.status = Status::InternalError;
  r.reason = reason::kEvaluatorOom;
  r.phases = {{"load", 0.5, 1 << 20, ""}, {"correctness", 2.0, int64_t{3} << 30, kFailureEvaluator}};
  r.footprint_bytes = int64_t{1} << 30;
  const auto back = round_trip(r);
  REQUIRE(back.phases.size() == 2);
  CHECK(back.phases[1].name == "correctness");
  CHECK(back.phases[1].peak_gpu_bytes == int64_t{3} << 30);
  CHECK(back.phases[1].failure == kFailureEvaluator);
  CHECK(back.footprint_bytes == int64_t{1} << 30);
  CHECK(back.phase("load") != nullptr);
  CHECK(back.phase("timing") == nullptr);
}

TEST_CASE("an evaluation result keeps who built each load_inline extension, and why") {
  EvalResult r;
  r.status = Status::Correct;
  r.extensions = {{"fast_ext", kBuiltByKagent, "", 0.02}, {"dyn_ext", kBuiltByTorch, "cpp_sources is not a constant", 41.5}};
  const auto back = round_trip(r);
  REQUIRE(back.extensions.size() == 2);
  CHECK(back.extensions[0].built_by == "kagent");
  CHECK(back.extensions[1].name == "dyn_ext");
  CHECK(back.extensions[1].reason == "cpp_sources is not a constant");
  CHECK(back.extensions[1].seconds == 41.5);
}

TEST_CASE("lock lines read back, and no reply is taken for one") {
  LockEvent held{LockEvent::Kind::Held, LockMode::Exclusive, 1.5, ""};
  auto line = lock_line(held);
  line["id"] = 7;
  const auto back = lock_event_of(line);
  REQUIRE(back);
  CHECK(back->kind == LockEvent::Kind::Held);
  CHECK(back->mode == LockMode::Exclusive);
  CHECK(back->waited_s == 1.5);
  const auto waiting = lock_event_of(lock_line({LockEvent::Kind::Waiting, LockMode::Shared, 0, ""}));
  REQUIRE(waiting);
  CHECK(waiting->kind == LockEvent::Kind::Waiting);
  CHECK(waiting->mode == LockMode::Shared);
  const auto broken = lock_event_of(lock_line({LockEvent::Kind::Broken, LockMode::None, 0, "flock: EBADF"}));
  REQUIRE(broken);
  CHECK(broken->why == "flock: EBADF");
  CHECK_FALSE(lock_event_of(ok_line(ShutdownReply{})));
  CHECK_FALSE(lock_event_of(error_line("bad_request", "x")));
  CHECK_FALSE(lock_event_of({{"lock", "sideways"}}));
}
