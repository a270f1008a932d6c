#include "synthetic_runs.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "prompt/answer_format.h"
#include "profiler/profile_text.h"
#include "prompt/prompt_builder.h"
#include "report/collection_data.h"
#include "result/policy.h"
#include "trajectory/rewards.h"
#include "trajectory/run_store.h"

namespace kagent::report::testing {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Example {
  std::string name, code, source;
};

std::vector<Example> load_examples(const fs::path& dir) {
  std::vector<Example> out;
  for (const char* name : {"elementwise_gelu", "row_softmax", "gemm_bias_relu", "conv_block"})
    out.push_back({name, read_file(dir / (std::string(name) + ".cu")), read_file(dir / (std::string(name) + ".py"))});
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

// One turn's edit of the previous code: a constant changed and a comment added, so that
// consecutive turns differ by a few added and removed lines, as real refinements do.
std::string refine(const std::string& code, int turn, std::mt19937& rng) {
  std::vector<std::string> lines = split_lines(code);
  if (lines.empty()) return code;
  std::vector<size_t> with_digit;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find_first_of("0123456789") != std::string::npos && lines[i].find("#include") == std::string::npos)
      with_digit.push_back(i);
  if (!with_digit.empty()) {
    std::string& l = lines[with_digit[rng() % with_digit.size()]];
    const size_t d = l.find_first_of("0123456789");
    l[d] = static_cast<char>('0' + (l[d] - '0' + 1 + static_cast<int>(rng() % 8)) % 10);
  }
  const size_t at = 1 + rng() % lines.size();
  lines.insert(lines.begin() + static_cast<long>(std::min(at, lines.size())),
               "// turn " + std::to_string(turn + 1) + ": tried a different block size and unrolling");
  return join_lines(lines);
}

std::string reasoning_text(int turn, std::mt19937& rng) {
  static const char* sentences[] = {
      "The kernel is memory-bound: every element is read once and written once, so the goal is full DRAM bandwidth.",
      "Vectorised float4 loads cut the number of memory instructions by four.",
      "The previous attempt failed because the pointer types did not match; cast through reinterpret_cast.",
      "Occupancy is limited by registers; launch bounds of 256 threads should help the compiler.",
      "A grid-stride loop keeps the grid small and handles any size.",
      "The reduction needs a warp shuffle first and shared memory only across warps.",
      "Fusing the bias and activation into the epilogue saves a pass over the output.",
      "Check the tail: sizes that are not multiples of four need a scalar path."};
  std::string s;
  const int n = 8 + static_cast<int>(rng() % 10);
  for (int i = 0; i < n; ++i) s += std::string(sentences[(rng() + static_cast<unsigned>(turn)) % 8]) + " ";
  return s;
}

TimingStats stats(double median_ms, double noise, std::mt19937& rng) {
  TimingStats t;
  t.median_ms = median_ms;
  t.mean_ms = median_ms * (1 + noise / 3);
  t.stdev_ms = median_ms * noise;
  t.rel_stdev = noise;
  t.min_ms = median_ms * (1 - noise);
  t.max_ms = median_ms * (1 + 3 * noise);
  t.iterations = 50 + static_cast<int>(rng() % 2000);
  t.total_s = t.iterations * median_ms / 1000;
  t.stop_reason = "noise below 1%";
  t.host_median_ms = median_ms * 1.02;
  return t;
}

// A profile in the shape profiler/profile_builder.cpp writes: a kernel table with occupancy,
// counters and a bound call per kernel, totals, DRAM traffic and the run's bound call.
json profile_json(const std::string& kernel, double ms, std::mt19937& rng) {
  std::uniform_real_distribution<double> pct(10, 95);
  const double dram = std::round(pct(rng) * 10) / 10, sm = std::round(pct(rng) * 10) / 10;
  const std::string bound = std::max(dram, sm) < 50 ? "latency" : dram >= sm ? "memory" : "compute";
  const json own = {{"name", kernel}, {"mangled", "_Z" + kernel}, {"own", true}, {"source", "own"}, {"calls", 1},
                    {"total_ms", ms * 0.9}, {"mean_ms", ms * 0.9}, {"share_pct", 90.0}, {"grid", {4096, 1, 1}},
                    {"block", {256, 1, 1}}, {"registers", 32}, {"static_smem", 0}, {"dynamic_smem", 0},
                    {"local_mem_per_thread", 0},
                    {"occupancy", {{"theoretical", 1.0}, {"active_blocks_per_sm", 8}, {"active_warps_per_sm", 64},
                                   {"max_warps_per_sm", 64}, {"limiter", "threads"}}},
                    {"waves", 3.88},
                    {"counters", {{"duration_ms", ms * 0.9}, {"dram_pct", dram}, {"sm_pct", sm}, {"issue_pct", std::round(sm * 8) / 10}}},
                    {"bound", {{"class", bound}, {"basis", "counters"}, {"dram_pct", dram}, {"sm_pct", sm}, {"issue_pct", std::round(sm * 8) / 10}}}};
  const json lib = {{"name", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"},
                    {"own", false}, {"source", "aten"}, {"calls", 1}, {"total_ms", ms * 0.1}, {"mean_ms", ms * 0.1},
                    {"share_pct", 10.0}, {"grid", {1024, 1, 1}}, {"block", {128, 1, 1}}, {"registers", 16},
                    {"static_smem", 0}, {"dynamic_smem", 0}, {"local_mem_per_thread", 0}};
  return {{"version", 1},
          {"kernels", {own, lib}},
          {"totals", {{"kernels", 2}, {"launches", 2}, {"gpu_ms", ms}, {"own_ms", ms * 0.9}, {"library_ms", ms * 0.1}, {"span_ms", ms * 1.05}}},
          {"own_share", 0.9},
          {"own_kernels_listed", true},
          {"counters_available", true},
          {"counters_reason", ""},
          {"measured_dram_gbps", 4200.0},
          {"dram", {{"bytes", 2.7e8}, {"gbps", std::round(dram * 420) / 10}, {"pct_of_measured_peak", dram}, {"duration_ms", ms}}},
          {"bound", {{"class", bound}, {"basis", "counters"}, {"dram_pct", dram}, {"sm_pct", sm}, {"issue_pct", std::round(sm * 8) / 10},
                     {"scope", "own kernels"},
                     {"rule", "memory or compute: the larger of DRAM and SM throughput (% of peak) when it is >= 50%; "
                              "latency: both below 50%"}}}};
}

struct ProblemTimes {
  double eager_ms, compiled_ms, skill;  // skill: log of the typical speedup the model reaches
  double difficulty;                    // 0 easy .. 1 hard: lowers the chance of a correct turn
};

EvalResult make_eval(Status status, const ProblemTimes& pt, int turn, std::mt19937& rng) {
  EvalResult r;
  r.status = status;
  r.format = "cuda";
  r.eval_seconds = 0.5 + (rng() % 1000) / 400.0;
  r.total_seconds = r.eval_seconds + 10;
  CompileInfo c;
  c.ok = status != Status::CompileError;
  c.seconds = 8 + (rng() % 1000) / 100.0;
  c.command = "nvcc -c candidate.cu";
  if (!c.ok) {
    c.errors = "candidate.cu(" + std::to_string(5 + rng() % 40) +
               "): error: no suitable conversion function from \"const float4\" to \"float\" exists\n"
               "    const float v = x[i];\n                    ^\n1 error detected in the compilation of \"candidate.cu\".";
    c.log = c.errors;
    r.message = "nvcc failed";
    r.compile = c;
    return r;
  }
  c.resources.push_back({"gelu_kernel(float const*, float*, long)", 32, 0, 0, 0, 0, 0});
  r.compile = c;
  Correctness cor;
  cor.trials = 5;
  if (status == Status::Wrong) {
    OutputCheck o;
    o.ok = false;
    o.reason = reason::kValues;
    o.numel = 33554432;
    o.mismatched = 1 + static_cast<int64_t>(rng() % o.numel);
    o.message = std::to_string(o.mismatched) + " of 33554432 elements outside tolerance (atol 0.01, rtol 0.01)";
    o.max_abs_error = 0.5;
    o.max_rel_error = 2.0;
    o.atol = o.rtol = 0.01;
    o.worst_index = {17, 4095};
    o.samples = {{{17, 4095}, 0.0, 0.84}, {{3, 12}, 1.5, 0.7}};
    cor.first_failure = o;
    cor.first_failure_trial = 1;
    cor.first_failure_run = "before reference";
    r.correctness = cor;
    r.message = "trial 1 (before reference), output 0: " + o.message;
    return r;
  }
  if (status == Status::RuntimeError) {
    r.runtime_error = "CUDA error: an illegal memory access was encountered";
    r.message = r.runtime_error;
    return r;
  }
  if (status == Status::Timeout) {
    r.message = "the candidate did not finish within 180 s";
    return r;
  }
  cor.trials_passed = 5;
  r.correctness = cor;
  std::normal_distribution<double> noise(0, 0.35);
  const double speedup = std::exp(pt.skill + 0.12 * turn + noise(rng));
  Timing t;
  t.candidate = stats(pt.eager_ms / speedup, 0.004 + (rng() % 100) / 5000.0, rng);
  t.eager = stats(pt.eager_ms, 0.01, rng);
  t.compiled = stats(pt.compiled_ms, 0.012, rng);
  t.speedup_eager = pt.eager_ms / t.candidate->median_ms;
  t.speedup_compiled = pt.compiled_ms / t.candidate->median_ms;
  r.timing = t;
  r.profile = profile_json("gelu_kernel(float const*, float*, long)", t.candidate->median_ms, rng);
  r.profile["text"] = profiler::render_profile_text(r.profile);  // as the worker adds it
  if (status == Status::Rejected) {
    r.guards.push_back({"library_share", kGuardReject, "own kernels ran 12% of the GPU time (floor 50%)"});
    r.message = "rejected by the library_share guard";
    r.reason = "library_share";
    return r;
  }
  r.message = "correct in 5 trials (max abs error 1.2e-06, max rel error 3.4e-07)";
  return r;
}

Status draw_status(int turn, double difficulty, std::mt19937& rng) {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  const double correct = std::min(0.85, (0.15 + 0.1 * turn) * 2.2 * std::pow(1 - difficulty, 1.5));
  if (u < correct) return Status::Correct;
  if (u < correct + 0.04) return Status::Rejected;
  if (u < correct + 0.07) return Status::RuntimeError;
  if (u < correct + 0.09) return Status::Timeout;
  const double rest = std::uniform_real_distribution<double>(0, 1)(rng);
  return rest < 0.55 ? Status::CompileError : Status::Wrong;
}

traj::Trajectory make_sample(const std::string& run_id, const traj::ProblemInfo& info, const Example& ex,
                             const ProblemTimes& pt, int sample, int turns, const std::string& system,
                             const std::string& task, const prompt::PromptBuilder& prompts, std::mt19937& rng) {
  traj::Trajectory t;
  t.run_id = run_id;
  t.problem = info;
  t.model = {"openai", "synthetic-model", "http://localhost:8000/v1", {}};
  t.model.sampling.temperature = 0.7;
  t.sample = sample;
  t.max_turns = turns;
  t.versions = {"0.1.0", "2.11.0+cu130", "13.0.88", "NVIDIA H200"};
  t.started_at = "2026-11-21T07:00:00.000Z";
  std::string code = ex.code;
  std::vector<traj::Message> history = {{"system", system}, {"user", task}};
  for (int k = 0; k < turns; ++k) {
    traj::Turn turn;
    turn.index = k;
    turn.messages = history;
    turn.reasoning = reasoning_text(k, rng);
    turn.started_at = t.started_at;
    turn.finished_at = "2026-11-21T07:00:0" + std::to_string(k) + ".000Z";
    turn.llm_seconds = 5 + (rng() % 300) / 10.0;
    if (rng() % 100 < 3) {  // an answer without code
      turn.answer = "I would restructure the kernel first.";
      turn.error = traj::TurnError{traj::turn_error::kFormat, "the answer has no ```cuda code block"};
      turn.feedback = "Your answer had no code block. Answer with exactly one ```cuda block.";
    } else {
      code = k == 0 ? code : refine(code, k, rng);
      turn.code = code;
      turn.answer = "Here is the next version.\n\n```cuda\n" + code + "```\n";
      turn.eval = make_eval(draw_status(k, pt.difficulty, rng), pt, k, rng);
      turn.feedback = prompts.feedback_prompt(*turn.eval);
      turn.eval_seconds = turn.eval->total_seconds;
    }
    int64_t sent = 0;
    for (const auto& m : turn.messages) sent += static_cast<int64_t>(m.content.size());
    turn.tokens = {sent / 4, static_cast<int64_t>(turn.answer.size() + turn.reasoning.size()) / 4,
                   static_cast<int64_t>(turn.reasoning.size()) / 4};
    // The `kernels` history: earlier code and feedback, no reasoning.
    history.push_back({"assistant", turn.code.empty() ? turn.answer : "```cuda\n" + turn.code + "```"});
    history.push_back({"user", turn.feedback});
    t.turns.push_back(std::move(turn));
  }
  t.status = traj::SampleStatus::Finished;
  t.stop_reason = traj::StopReason::TurnLimit;
  t.finished_at = "2026-11-21T07:01:00.000Z";
  return t;
}

json run_config(const std::string& problem_path, const SynthOptions& o) {
  return {{"problem", problem_path}, {"format", "cuda"}, {"samples", o.samples}, {"turns", o.turns},
          {"history", "kernels"}, {"trials", 5}, {"timeout", 180.0},
          {"llm", {{"provider", "openai"}, {"model", "synthetic-model"}, {"base_url", "http://localhost:8000/v1"}}}};
}

struct WrittenRun {
  ProblemTimes times;
  std::vector<traj::Trajectory> finished;
};

WrittenRun write_run(const fs::path& dir, const std::string& problem, int level, const SynthOptions& o, int running,
                     const std::vector<Example>& examples, const prompt::PromptBuilder& prompts, uint32_t seed) {
  std::mt19937 rng(seed);
  const Example& ex = examples[rng() % examples.size()];
  std::normal_distribution<double> n01(0, 1);
  WrittenRun w;
  w.times.eager_ms = std::exp(std::log(0.4) + 1.2 * n01(rng));
  w.times.compiled_ms = w.times.eager_ms * std::exp(-0.1 + 0.2 * n01(rng));
  w.times.skill = -0.25 + 0.45 * n01(rng);
  w.times.difficulty = std::uniform_real_distribution<double>(0, 1)(rng);
  traj::ProblemInfo info{problem, "/kernelbench/level" + std::to_string(level) + "/" + problem + ".py",
                         std::to_string(seed), level, level == 1 ? traj::kOpSingle : level == 2 ? traj::kOpFused : traj::kOpModel};
  const json device = {{"name", "NVIDIA H200"}, {"cc", "9.0"}, {"sms", 132}, {"memory_gb", 141}};
  const std::string system = prompts.system_prompt(prompt::AnswerFormat::Cuda, device);
  const std::string task = "Write a faster CUDA kernel for the PyTorch module below (" + problem + ").\n\n```python\n" +
                           ex.source + "```\n\nAnswer with one ```cuda block that defines `forward`.";
  traj::RunStore::Options opts;
  opts.durable = false;
  auto store = traj::RunStore::create_at(dir, run_config(info.path, o), opts);
  for (int s = 0; s < o.samples; ++s) {
    traj::Trajectory t = make_sample(store->run_id(), info, ex, w.times, s, o.turns, system, task, prompts, rng);
    if (s >= o.samples - running) {
      t.turns.resize(static_cast<size_t>(std::max(1, o.turns / 2)));
      t.status = traj::SampleStatus::Running;
      t.stop_reason = traj::StopReason::None;
      t.finished_at.clear();
      store->save_partial(t);
    } else {
      store->finish_sample(t);
      traj::assign_rewards(t);  // the store scored its own copy; the index needs the best turn too
      w.finished.push_back(std::move(t));
    }
  }
  store->write_summary();
  return w;
}

void write_json(const fs::path& p, const json& j) { write_file_atomic(p, j.dump(2) + "\n"); }

// metrics.json as `kagent collect` writes it at the end: the metrics the report computes (the
// same code), named as collect names them.
void write_collect_metrics(const fs::path& dir) {
  json metrics = collection_page_data(dir)["metrics"];
  metrics["computed_by"] = "kagent collect";
  write_json(dir / "metrics.json", metrics);
}

}  // namespace

void write_synthetic_run(const fs::path& dir, const std::string& problem, int level, const SynthOptions& options,
                         int running) {
  const prompt::PromptBuilder prompts;
  write_run(dir, problem, level, options, running, load_examples(options.examples_dir), prompts, options.seed);
}

void write_synthetic_collection(const fs::path& dir, const SynthOptions& o, const CollectionOptions& c) {
  const prompt::PromptBuilder prompts;
  const std::vector<Example> examples = load_examples(o.examples_dir);
  static const char* ops[] = {"ReLU", "Softmax", "Matmul", "Conv2d_ReLU_MaxPool", "LayerNorm", "GELU", "Gemm_Bias_ReLU", "MLP"};
  fs::create_directories(dir / "problems");
  std::mt19937 rng(o.seed);
  json problems = json::array(), rows = json::array();
  std::string index;
  int errors = 0, done = 0, evaluations = 0;
  for (int i = 0; i < c.problems; ++i) {
    const int level = i % 5 < 2 ? 1 : i % 5 < 4 ? 2 : 3;
    const std::string name = "L" + std::to_string(level) + "_" + std::to_string(i + 1) + "_" + ops[rng() % 8];
    problems.push_back({{"name", name}, {"path", "level" + std::to_string(level) + "/" + name + ".py"}, {"level", level},
                        {"problem_id", i + 1}, {"sha256", std::to_string(o.seed * 100000 + static_cast<uint32_t>(i))},
                        {"op_type", level == 1 ? traj::kOpSingle : level == 2 ? traj::kOpFused : traj::kOpModel}});
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    if (u < c.problem_errors) {
      ++errors;
      index += json{{"problem", name}, {"status", "problem_error"}, {"reason", "problem_load_error: get_inputs() raised"}}.dump() + "\n";
      continue;
    }
    const int running = u < c.problem_errors + c.running ? 1 : 0;
    const WrittenRun w = write_run(dir / "problems" / name, name, level, o, running, examples, prompts,
                                   o.seed * 7919 + static_cast<uint32_t>(i));
    rows.push_back({{"problem", name}, {"level", level}, {"eager_ms", w.times.eager_ms}, {"eager_noise", 0.01},
                    {"compiled_ms", w.times.compiled_ms}, {"compiled_noise", 0.012}, {"compiled_error", nullptr}});
    for (const auto& t : w.finished) {
      ++done;
      double gpu = 0;
      std::optional<double> se, sc;
      for (const auto& turn : t.turns) {
        if (!turn.eval) continue;
        gpu += turn.eval->eval_seconds;
        ++evaluations;
      }
      if (t.best_turn) {
        se = t.turns[static_cast<size_t>(*t.best_turn)].speedup_eager();
        sc = t.turns[static_cast<size_t>(*t.best_turn)].speedup_compiled();
      }
      index += json{{"problem", name}, {"sample", t.sample}, {"status", "finished"}, {"correct", t.best_turn.has_value()},
                    {"best_turn", t.best_turn ? json(*t.best_turn) : json(nullptr)},
                    {"speedup_eager", se ? json(*se) : json(nullptr)}, {"speedup_compiled", sc ? json(*sc) : json(nullptr)},
                    {"turns", t.turns.size()}, {"tokens", t.total_tokens().total()}, {"gpu_seconds", gpu},
                    {"at", t.finished_at}}.dump() + "\n";
    }
  }
  write_json(dir / "manifest.json",
             {{"kind", "kagent-collection"}, {"schema_version", 1},
              {"config", {{"samples", o.samples}, {"turns", o.turns}, {"format", "cuda"}, {"history", "kernels"},
                          {"llm", {{"provider", "openai"}, {"model", "synthetic-model"}}}, {"trials", 5}}},
              {"versions", {{"kagent", "0.1.0"}, {"torch", "2.11.0+cu130"}, {"cuda", "13.0.88"}, {"gpu", "NVIDIA H200"}}},
              {"shard", nullptr},
              {"suite", {{"root", "/kernelbench"}, {"problems", problems}}},
              {"created_at", "2026-11-21T07:00:00.000Z"}});
  write_file_atomic(dir / "index.jsonl", index);
  write_json(dir / "baselines.json", {{"gpu", "NVIDIA H200"}, {"torch", "2.11.0+cu130"}, {"rows", rows}});
  write_json(dir / "summary.json", {{"problems", c.problems}, {"problem_errors", errors}, {"samples_done", done},
                                    {"samples_failed", 0}, {"evaluations", evaluations}, {"wall_seconds", 3600.0},
                                    {"evals_per_gpu_minute", evaluations / 60.0}});
  if (c.metrics) write_collect_metrics(dir);
}

std::vector<ProblemSpec> verdict_mix_problems() {
  const auto turn = [](Status status, std::string guard = "", std::optional<double> eager = std::nullopt) {
    TurnSpec t;
    t.status = status;
    t.guard = std::move(guard);
    t.speedup_eager = eager;
    return t;
  };
  TurnSpec no_code;
  no_code.no_code = true;
  const TurnSpec compile_error = turn(Status::CompileError);
  return {{"L1_1_flagged", 1, {{compile_error, turn(Status::Correct, "library_share", 2.0)}}},
          {"L1_2_no_kernel", 1, {{turn(Status::Correct, "no_kernel", 1.2)}}},
          {"L1_3_no_build", 1, {{compile_error, no_code}}},
          {"L2_4_solved", 2,
           {{turn(Status::Wrong), turn(Status::Correct, "", 1.5)}, {turn(Status::RuntimeError), turn(Status::Timeout)}}}};
}

void write_collection_of(const fs::path& dir, const std::vector<ProblemSpec>& problems, const std::string& policy,
                         bool metrics) {
  const Policy ruling = policy_from_string(policy);
  std::mt19937 rng(7);
  json listed = json::array();
  std::string index;
  int max_samples = 1;
  size_t max_turns = 1;
  for (const auto& p : problems) {
    max_samples = std::max(max_samples, static_cast<int>(p.samples.size()));
    for (const auto& s : p.samples) max_turns = std::max(max_turns, s.size());
  }
  for (const auto& p : problems) {
    listed.push_back({{"name", p.name}, {"path", "level" + std::to_string(p.level) + "/" + p.name + ".py"},
                      {"level", p.level}, {"op_type", traj::kOpSingle}});
    traj::RunStore::Options opts;
    opts.durable = false;
    const json config = {{"problem", "/kernelbench/" + p.name + ".py"}, {"format", "cuda"},
                         {"samples", static_cast<int>(p.samples.size())}, {"turns", static_cast<int>(max_turns)}};
    auto store = traj::RunStore::create_at(dir / "problems" / p.name, config, opts);
    for (size_t s = 0; s < p.samples.size(); ++s) {
      traj::Trajectory t;
      t.run_id = store->run_id();
      t.problem = {p.name, "/kernelbench/" + p.name + ".py", "0", p.level, traj::kOpSingle};
      t.sample = static_cast<int>(s);
      t.max_turns = static_cast<int>(max_turns);
      t.started_at = "2026-11-21T07:00:00.000Z";
      for (size_t k = 0; k < p.samples[s].size(); ++k) {
        const TurnSpec& spec = p.samples[s][k];
        traj::Turn turn;
        turn.index = static_cast<int>(k);
        turn.answer = "answer";
        if (spec.no_code) {
          turn.error = traj::TurnError{traj::turn_error::kFormat, "the answer has no ```cuda code block"};
        } else {
          turn.code = "__global__ void k() {}\n";
          EvalResult r;
          r.status = spec.status;
          r.format = "cuda";
          r.message = to_string(spec.status);
          if (spec.speedup_eager || spec.speedup_compiled) {
            Timing timing;
            timing.candidate = stats(0.1, 0.01, rng);
            if (spec.speedup_eager) {
              timing.eager = stats(0.1 * *spec.speedup_eager, 0.01, rng);
              timing.speedup_eager = spec.speedup_eager;
            }
            if (spec.speedup_compiled) {
              timing.compiled = stats(0.1 * *spec.speedup_compiled, 0.01, rng);
              timing.speedup_compiled = spec.speedup_compiled;
            }
            r.timing = timing;
          }
          if (!spec.guard.empty()) r.guards.push_back({spec.guard, kGuardReject, "found by the synthetic guard"});
          apply_policies(r, ruling);  // as the evaluation ends: both verdicts, the ruling one as status
          turn.eval = r;
        }
        t.turns.push_back(std::move(turn));
      }
      t.status = traj::SampleStatus::Finished;
      t.stop_reason = traj::StopReason::TurnLimit;
      t.finished_at = "2026-11-21T07:01:00.000Z";
      store->finish_sample(t);
      traj::assign_rewards(t);
      index += json{{"problem", p.name}, {"sample", t.sample}, {"status", "finished"}, {"correct", t.best_turn.has_value()},
                    {"turns", t.turns.size()}, {"gpu_seconds", 1.0}, {"at", t.finished_at}}.dump() + "\n";
    }
    store->write_summary();
  }
  write_json(dir / "manifest.json",
             {{"kind", "kagent-collection"}, {"schema_version", 1},
              {"config", {{"samples", max_samples}, {"turns", static_cast<int>(max_turns)}, {"format", "cuda"},
                          {"eval", {{"policy", policy}}}}},
              {"suite", {{"root", "/kernelbench"}, {"problems", listed}}},
              {"created_at", "2026-11-21T07:00:00.000Z"}});
  write_file_atomic(dir / "index.jsonl", index);
  if (metrics) write_collect_metrics(dir);
}

}  // namespace kagent::report::testing
