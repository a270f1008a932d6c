#include "collect/collection_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "collect/baselines_table.h"
#include "collect/charges_file.h"
#include "collect/sample_order.h"
#include "common/files.h"
#include "common/units.h"
#include "common/utf8.h"
#include "problem/spec_cache.h"

namespace kagent::collect {

namespace fs = std::filesystem;

Order order_from_string(const std::string& s) {
  if (s == "largest") return Order::Largest;
  if (s == "interleaved") return Order::Interleaved;
  throw std::invalid_argument("unknown order \"" + s + "\" (largest | interleaved)");
}

std::string to_string(Order o) { return o == Order::Largest ? "largest" : "interleaved"; }

namespace {

// One problem of the run: opened once (spec), wired once on first use (prompts, run folder).
struct ProblemSlot {
  SuiteProblem problem;
  std::shared_future<bool> opened;  // whether it can run, once its spec is loaded
  std::unique_ptr<EvaluationSession> session;
  int64_t footprint = 0;
  std::once_flag prepared;
  std::unique_ptr<traj::RunStore> run_store;
  std::unique_ptr<loop::ProblemRun> run;
  std::atomic<int> remaining{0};
  bool baseline_row_kept = false;  // a replay's: from its first timed evaluation (under the runner's mutex)
};

// The reference's times of a sample's first turn that timed them: a replay's baseline row.
std::optional<Timing> first_timed_baselines(const traj::Trajectory& t) {
  for (const traj::Turn& turn : t.turns)
    if (turn.eval && turn.eval->timing && turn.eval->timing->eager) return turn.eval->timing;
  return std::nullopt;
}

// Why a problem file cannot be Python source a worker loads: far larger than any problem, or
// not UTF-8 text; nullopt when it can be.
std::optional<std::string> unloadable_source(const std::string& path) {
  constexpr std::uintmax_t kMaxProblemBytes = 16u << 20;
  std::error_code ec;
  const std::uintmax_t bytes = fs::file_size(path, ec);
  if (ec) return "cannot read " + path + ": " + ec.message();
  if (bytes > kMaxProblemBytes)
    return fmt::format("{} is {}; a problem file is at most {}", path, format_bytes(double(bytes)), format_bytes(double(kMaxProblemBytes)));
  try {
    if (!is_valid_utf8(read_file(path))) return path + " is not UTF-8 text";
  } catch (const std::exception& e) {
    return e.what();
  }
  return std::nullopt;
}

// Runs `fn(i)` for i in [0, n) on up to `threads` threads.
template <class Fn>
void parallel_for(size_t n, size_t threads, Fn fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::jthread> pool;
  for (size_t t = 1; t < std::min(threads, n); ++t) pool.emplace_back(work);
  work();
}

// The problems whose spec is not on disk (the end of `items`, each problem's samples together)
// in spread_large's order of their files' sizes.
void spread_unknown_large(std::vector<std::pair<ProblemSlot*, int>>& items) {
  const auto first_unknown = std::find_if(items.begin(), items.end(), [](const auto& it) { return !it.first->opened.valid(); });
  std::vector<std::pair<size_t, size_t>> runs;  // [begin, end) in items, one per problem
  for (auto it = first_unknown; it != items.end(); ++it) {
    const auto at = static_cast<size_t>(it - items.begin());
    if (runs.empty() || items[runs.back().first].first != it->first) runs.emplace_back(at, at);
    runs.back().second = at + 1;
  }
  std::vector<std::uintmax_t> sizes;
  for (const auto& [begin, end] : runs) {
    std::error_code ec;
    const std::uintmax_t bytes = fs::file_size(items[begin].first->problem.path, ec);
    sizes.push_back(ec ? 0 : bytes);
  }
  std::vector<std::pair<ProblemSlot*, int>> spread;
  for (const size_t i : spread_large(sizes)) spread.insert(spread.end(), items.begin() + runs[i].first, items.begin() + runs[i].second);
  std::copy(spread.begin(), spread.end(), first_unknown);
}

}  // namespace

CollectOutcome run_collection(CollectionStore& store, const std::vector<SuiteProblem>& problems, const RunnerConfig& cfg,
                              llm::CancelToken& cancel) {
  const auto started = std::chrono::steady_clock::now();
  CollectOutcome out;
  std::mutex mu;  // out, and the events' order where it matters
  auto emit = [&](CollectEvent e) {
    if (cfg.on_event) cfg.on_event(e);
  };
  auto problem_failed = [&](const std::string& name, const std::string& reason) {
    store.record_problem_error(name, reason);
    {
      std::lock_guard lock(mu);
      out.problem_errors.emplace_back(name, reason);
    }
    emit({CollectEvent::Kind::ProblemFailed, name, -1, nullptr, nullptr, reason});
  };
  auto finish = [&] {
    out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return std::move(out);
  };

  const auto workers = cfg.pool->started();
  if (const auto* err = std::get_if<WorkerError>(&workers)) {
    out.internal_error = "cannot start the worker: " + err->message;
    return finish();
  }
  const DeviceInfo device = std::get<DeviceInfo>(workers);

  // 1. The problems. One whose spec is on disk opens now (no worker needed, its footprint known
  //    for the order); the others open in the background, one per GPU worker at a time, in the
  //    order their samples run, while the samples of problems already open compile and evaluate:
  //    a worker loading a problem is GPU work the compiles overlap with. A problem that cannot
  //    run is reported when its open fails, before any model call for it.
  std::vector<std::unique_ptr<ProblemSlot>> slots;
  int failed_before = 0;
  for (const auto& p : problems) {
    if (auto why = store.problem_error(p.name)) {
      out.problem_errors.emplace_back(p.name, *why);
      ++failed_before;
      continue;
    }
    auto s = std::make_unique<ProblemSlot>();
    s->problem = p;
    slots.push_back(std::move(s));
  }
  {
    CollectEvent plan{CollectEvent::Kind::Plan, "", -1, nullptr, nullptr, ""};
    plan.problems = static_cast<int>(problems.size());
    plan.samples = static_cast<int>(slots.size()) * cfg.samples;
    plan.samples_per_problem = cfg.samples;
    plan.problems_failed_before = failed_before;
    emit(plan);
  }
  // Opens one problem: true when it can run. An internal error (no worker) cancels the run.
  auto open_slot = [&](ProblemSlot& s) {
    if (!fs::is_regular_file(s.problem.path)) {
      problem_failed(s.problem.name, "file_not_found: no such file " + s.problem.path);
      return false;
    }
    // A file no worker could load as Python source, said without a worker's time.
    if (auto why = unloadable_source(s.problem.path)) {
      problem_failed(s.problem.name, "problem_load_error: " + *why);
      return false;
    }
    s.session = std::make_unique<EvaluationSession>(cfg.pool);
    if (auto err = s.session->open(s.problem.path)) {
      if (err->result.status == Status::InternalError) {
        {
          std::lock_guard lock(mu);
          if (out.internal_error.empty()) out.internal_error = err->line;
        }
        cancel.cancel();
        return false;
      }
      // A load that ended after a stop signal (the signal may have reached the worker first) is
      // not the problem's failure: nothing is recorded, and resume opens it again.
      if (cfg.options.stop && cfg.options.stop->cancelled()) return false;
      problem_failed(s.problem.name, fmt::format("{}: {}", err->result.reason, err->result.message));
      return false;
    }
    s.footprint = footprint_bytes(s.session->spec());
    return true;
  };
  std::vector<bool> known(slots.size(), false);
  for (size_t i = 0; i < slots.size(); ++i) {
    ProblemSlot& s = *slots[i];
    if (!fs::is_regular_file(s.problem.path) || !load_cached_spec(cfg.pool->cache_dir(), s.problem.path)) continue;
    known[i] = true;
    std::promise<bool> p;
    p.set_value(open_slot(s));
    s.opened = p.get_future().share();
  }
  if (!out.internal_error.empty()) return finish();

  // 2. What is left: samples recorded in a problem's run folder but not yet in the index (the
  //    run was killed between the two writes) are indexed now, never run again.
  std::vector<std::pair<ProblemSlot*, int>> items;
  int done_before = 0, problems_done_before = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    ProblemSlot& s = *slots[i];
    if (known[i] && !s.opened.get()) continue;
    const fs::path dir = store.problem_dir(s.problem.name);
    if (fs::exists(dir / traj::kConfigFile)) {
      try {
        for (const auto& [sample, t] : traj::RunStore::scan(dir).finished)
          if (sample < cfg.samples) store.record_sample(s.problem.name, t);
      } catch (const std::exception&) {
        // an unreadable folder is reported when the problem is wired
      }
    }
    for (int k = 0; k < cfg.samples; ++k) {
      if (store.has_sample(s.problem.name, k)) {
        ++done_before;
        continue;
      }
      items.emplace_back(&s, k);
      ++s.remaining;
    }
    if (s.remaining == 0) ++problems_done_before;
  }
  if (cfg.order == Order::Largest) {
    // Largest first among the problems whose spec is known; the others after them, in suite order.
    std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
      const bool ka = a.first->opened.valid(), kb = b.first->opened.valid();
      if (ka != kb) return ka;
      return ka && a.first->footprint > b.first->footprint;
    });
    spread_unknown_large(items);
  } else {
    std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  }
  {
    CollectEvent plan{CollectEvent::Kind::Plan, "", -1, nullptr, nullptr, ""};
    plan.problems = static_cast<int>(problems.size());
    int usable = 0;
    for (size_t i = 0; i < slots.size(); ++i) usable += !known[i] || slots[i]->opened.get();
    plan.samples = usable * cfg.samples;
    plan.samples_per_problem = cfg.samples;
    plan.samples_done_before = done_before;
    plan.problems_done_before = problems_done_before;
    plan.problems_failed_before = failed_before;
    emit(plan);
  }
  // The problems still to open, in the order their first sample runs.
  std::vector<ProblemSlot*> to_open;
  for (auto& [slot, sample] : items)
    if (!slot->opened.valid() && std::find(to_open.begin(), to_open.end(), slot) == to_open.end()) to_open.push_back(slot);
  std::vector<std::promise<bool>> opened(to_open.size());
  for (size_t i = 0; i < to_open.size(); ++i) to_open[i]->opened = opened[i].get_future().share();
  std::jthread opener([&] {
    // With two workers per GPU the opens keep off one of them: evaluations always have a worker.
    parallel_for(to_open.size(), std::max<size_t>(1, cfg.pool->opening_workers()),
                 [&](size_t i) { opened[i].set_value(!cancel.cancelled() && open_slot(*to_open[i])); });
  });

  // 3. The samples. A problem is wired (prompts with its baselines, run folder) by the first
  //    sample that reaches it.
  auto prepare = [&](ProblemSlot& s) {
    std::call_once(s.prepared, [&] {
      try {
        loop::ProblemPrompts rendered =
            loop::render_problem_prompts(*s.session, device, *cfg.prompts, cfg.options.format, cfg.prompt_baselines);
        if (device.available && cfg.prompt_baselines) {
          std::lock_guard lock(mu);
          out.baseline_rows.push_back(baseline_row(s.problem, rendered.baselines,
                                                   cfg.pool->settings().options.compiled_baseline));
        }
        const fs::path dir = store.problem_dir(s.problem.name);
        s.run_store = fs::exists(dir / traj::kConfigFile) ? traj::RunStore::open(dir)
                                                          : traj::RunStore::create_at(dir, cfg.problem_config(s.problem));
        loop::ProblemRunOptions o = cfg.options;
        o.problem_tag = s.problem.name;
        o.on_event = [&cfg, name = s.problem.name](const loop::LoopEvent& e) {
          if (e.phase == loop::LoopEvent::Phase::Done && cfg.on_event)
            cfg.on_event({CollectEvent::Kind::Turn, name, e.sample, e.record, e.trajectory, ""});
        };
        s.run = std::make_unique<loop::ProblemRun>(*s.session, device, *s.run_store, *cfg.llm, *cfg.prompts,
                                                   std::move(rendered), cfg.model, std::move(o));
      } catch (const std::exception& e) {
        problem_failed(s.problem.name, std::string("prepare_error: ") + e.what());
      }
    });
    return s.run != nullptr;
  };
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next++; k < items.size() && !cancel.cancelled(); k = next++) {
      auto [slot, sample] = items[k];
      const std::shared_future<bool> opened = slot->opened;  // a copy per thread
      if (!opened.get() || !prepare(*slot)) continue;
      const std::string& name = slot->problem.name;
      emit({CollectEvent::Kind::SampleStarted, name, sample, nullptr, nullptr, ""});
      try {
        loop::SampleRun r = slot->run->run_sample(sample);
        append_charges(store.dir(), cfg.pool->take_charges());  // earlier candidates blamed meanwhile
        if (r.recorded) {
          store.record_sample(name, r.trajectory);
          {
            std::lock_guard lock(mu);
            ++out.samples_recorded;
            if (!cfg.prompt_baselines && !slot->baseline_row_kept)
              if (auto timed = first_timed_baselines(r.trajectory)) {
                out.baseline_rows.push_back(
                    baseline_row(slot->problem, timed, cfg.pool->settings().options.compiled_baseline));
                slot->baseline_row_kept = true;
              }
          }
          if (--slot->remaining == 0) emit({CollectEvent::Kind::ProblemDone, name, -1, nullptr, nullptr, ""});
          emit({CollectEvent::Kind::SampleRecorded, name, sample, nullptr, &r.trajectory, ""});
        } else {
          {
            std::lock_guard lock(mu);
            ++out.samples_stopped;
          }
          emit({CollectEvent::Kind::SampleStopped, name, sample, nullptr, &r.trajectory, r.interrupted});
        }
      } catch (const loop::RunAborted& e) {
        std::lock_guard lock(mu);
        if (!out.aborted) out.aborted = e;  // the first failure is the cause; the others its cancellation
        cancel.cancel();
        return;
      } catch (const std::exception& e) {
        // One sample's defect (a record that cannot be written or read, a value kagent did not
        // expect), not the collection's: logged with its name, and the others go on.
        {
          std::lock_guard lock(mu);
          out.sample_failures.push_back({name, sample, e.what()});
        }
        emit({CollectEvent::Kind::SampleFailed, name, sample, nullptr, nullptr, e.what()});
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    const size_t n = std::min(items.size(), static_cast<size_t>(std::max(1, cfg.concurrency)));
    for (size_t t = 0; t < n; ++t) threads.emplace_back(work);
  }
  opener.join();
  for (auto& s : slots)
    if (s->run_store) s->run_store->write_summary();
  try {
    append_charges(store.dir(), cfg.pool->take_charges());
  } catch (const std::exception&) {
  }
  return finish();
}

}  // namespace kagent::collect
