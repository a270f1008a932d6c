// The worker's own isolation pieces on the CPU, in an embedded interpreter as in the worker:
// WorkerState (what a request left behind: Python state put back, a native thread still
// computing, a Python thread) and LibraryInstances (a repeated native library loads as a
// fresh instance, its namespace symbol renamed in a private copy).
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <filesystem>
#include <thread>

#include "build_info.h"
#include "common/files.h"
#include "result/eval_result.h"
#include "embedded_python.h"
#include "temp_dir.h"
#include "worker/service/library_instances.h"
#include "worker/service/worker_state.h"

using namespace kagent;
using namespace kagent::worker;
namespace fs = std::filesystem;

namespace {

PythonRuntime& py() { return kagent::testing::embedded_python(); }
using kagent::testing::run_python;

const LeftBehind* find(const std::vector<LeftBehind>& items, const std::string& item) {
  for (const auto& l : items)
    if (l.item == item) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("worker state: nothing done, nothing found") {
  const DeviceInfo cpu;  // no GPU: the CUDA checks are left out
  WorkerState state(py(), cpu);
  run_python("import torch; torch.randn(8).sum()");
  CHECK(state.check_and_restore(false).empty());
  CHECK_FALSE(state.must_replace());
}

TEST_CASE("worker state: Python state put back and named, a thread left running replaces the worker") {
  const DeviceInfo cpu;
  {
    WorkerState state(py(), cpu);
    run_python("import torch; torch.set_default_dtype(torch.float64); torch.backends.cudnn.benchmark = True");
    const auto found = state.check_and_restore(false);
    REQUIRE(find(found, "torch.get_default_dtype()"));
    CHECK(find(found, "torch.get_default_dtype()")->action == kLeftRestored);
    CHECK(find(found, "torch.backends.cudnn.benchmark"));
    CHECK_FALSE(state.must_replace());
    run_python("import torch; assert torch.get_default_dtype() == torch.float32 and not torch.backends.cudnn.benchmark");
  }
  {
    std::atomic<bool> stop{false};
    WorkerState state(py(), cpu);
    std::thread spinner([&] {
      volatile uint64_t x = 0;
      while (!stop) x = x + 1;
    });
    const auto found = state.check_and_restore(false);
    stop = true;
    spinner.join();
    REQUIRE(find(found, "thread"));
    CHECK(find(found, "thread")->charged);
    CHECK(state.must_replace());
  }
  {
    // A thread that waits for work, as a library's pool does, is not the candidate's computing.
    std::mutex mu;
    std::condition_variable wake;
    bool stop = false;
    WorkerState state(py(), cpu);
    std::thread waiter([&] {
      std::unique_lock lock(mu);
      wake.wait(lock, [&] { return stop; });
    });
    const auto found = state.check_and_restore(false);
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    wake.notify_all();
    waiter.join();
    CHECK_FALSE(find(found, "thread"));
  }
}

TEST_CASE("worker state: a correct verdict whose candidate left the worker unusable is charged") {
  EvalResult r;
  r.status = Status::Correct;
  r.isolation.left_behind = {{"torch.get_default_dtype()", "torch.float64 -> torch.float32", kLeftRestored, false}};
  charge_left_behind(r);
  CHECK(r.status == Status::Correct);  // put back: nothing to charge
  r.isolation.left_behind.push_back({"graph_capture", "a capture in progress", kLeftReplaced, true});
  charge_left_behind(r);
  CHECK(r.status == Status::RuntimeError);
  CHECK(r.reason == reason::kWorkerState);
  CHECK(r.message.find("graph_capture") != std::string::npos);
  EvalResult wrong;
  wrong.status = Status::Wrong;
  wrong.isolation = r.isolation;
  charge_left_behind(wrong);
  CHECK(wrong.status == Status::Wrong);  // its own verdict stands; left_behind names the rest
  // kagent's step failed beside what the candidate left (a capture left open refused kagent's
  // next CUDA call): the candidate's, never an internal_error (the chaos test's finding).
  EvalResult tripped;
  tripped.status = Status::InternalError;
  tripped.reason = reason::kEvaluatorError;
  tripped.message = "kagent's evaluation failed: CUDA error: operation not permitted when stream is capturing";
  tripped.isolation = r.isolation;
  charge_left_behind(tripped);
  CHECK(tripped.status == Status::RuntimeError);
  CHECK(tripped.reason == reason::kWorkerState);
  CHECK(tripped.runtime_error.find("stream is capturing") != std::string::npos);
}

TEST_CASE("library instances: a repeated library is a fresh instance with its own namespace and static state") {
  const std::string artifact = KAGENT_FAKE_LIBRARY;
  testing::TempDir dir("kagent-instances");
  LibraryInstances libraries(dir.str());
  const LibraryInstance first = libraries.fresh(artifact, "kagent_0123456789abcdef::forward");
  CHECK(first.path == artifact);
  CHECK(first.op_name == "kagent_0123456789abcdef::forward");
  const LibraryInstance second = libraries.fresh(artifact, "kagent_0123456789abcdef::forward");
  CHECK(second.path != artifact);
  CHECK(second.op_name != first.op_name);
  CHECK(second.op_name.size() == first.op_name.size());
  CHECK(second.op_name.ends_with("::forward"));

  void* a = ::dlopen(first.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* b = ::dlopen(second.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a != b);
  using Calls = int (*)();
  auto calls_a = reinterpret_cast<Calls>(::dlsym(a, "kagent_test_calls"));
  auto calls_b = reinterpret_cast<Calls>(::dlsym(b, "kagent_test_calls"));
  CHECK(calls_a() == 1);
  CHECK(calls_a() == 2);
  CHECK(calls_b() == 1);  // its own static state, as a first load would have
  const auto* ns_b = static_cast<const char*>(::dlsym(b, "kagent_op_namespace"));
  const auto* ns_a = static_cast<const char*>(::dlsym(a, "kagent_op_namespace"));
  CHECK(std::string(ns_a) == "kagent_0123456789abcdef");
  CHECK(std::string(ns_b) + "::forward" == second.op_name);
}

TEST_CASE("library instances: the namespace is renamed only where it holds the expected text") {
  testing::TempDir dir("kagent-instances");
  const std::string out = (dir.path() / "copy.so").string();
  CHECK_THROWS_WITH(rename_elf_string(KAGENT_FAKE_LIBRARY, out, "kagent_op_namespace", "kagent_ffffffffffffffff",
                                      "kagent_0000000000000000"),
                    doctest::Contains("does not hold"));
  CHECK_THROWS_WITH(rename_elf_string(KAGENT_FAKE_LIBRARY, out, "no_such_symbol", "a", "b"),
                    doctest::Contains("no symbol"));
  CHECK_THROWS(rename_elf_string(KAGENT_FAKE_LIBRARY, out, "kagent_op_namespace", "kagent_0123456789abcdef", "short"));
  const std::string text = dir.write("not-elf.so", "hello");
  CHECK_THROWS_WITH(rename_elf_string(text, out, "kagent_op_namespace", "a", "b"), doctest::Contains("not a 64-bit ELF"));
}

TEST_CASE("GcPaused: Python's garbage collector is off while it lives, and back as it was after") {
  py();
  run_python("import gc; assert gc.isenabled()");
  {
    const GcPaused paused;
    run_python("import gc; assert not gc.isenabled()");
    {
      const GcPaused nested;  // already off: stays off, and the outer scope turns it back on
    }
    run_python("import gc; assert not gc.isenabled()");
  }
  run_python("import gc; assert gc.isenabled()");
  run_python("import gc; gc.disable()");
  { const GcPaused paused; }
  run_python("import gc; assert not gc.isenabled(); gc.enable()");  // off before, off after
}
