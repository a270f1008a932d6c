// GPU memory shared by processes: every request that puts a problem's tensors on a GPU first
// takes a ticket for the memory it will need, from a ledger that all kagent processes on the
// machine share (one file per GPU UUID in a well-known folder, under flock). Separate `kagent
// eval` processes, collect with several jobs per GPU and serve all queue there instead of
// running out of memory together.
//
//   need      an evaluation's estimate: kNeedPerFootprint x the problem's footprint (inputs +
//             parameters + outputs; bench/memory measured at most 4.25x at the official sizes)
//             plus kNeedOverhead; the whole GPU when it must run alone (exclusive)
//   taken     the tickets other processes hold (each at least what its worker holds now, by
//             NVML), plus what every other process on the GPU holds (NVML: idle workers'
//             contexts, programs that are not kagent)
//   admitted  when need + taken fits the GPU, in order of arrival; a request that cannot fit
//             even so runs once nothing else holds a ticket (alone is the best it can get)
// A waiting request says so once (the notice), with the numbers. Tickets of processes that
// died are dropped by the next reader. Where the folder cannot be used, requests go unqueued.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/client/gpu_watch.h"

namespace kagent {

inline constexpr double kNeedPerFootprint = 4.5;
inline constexpr uint64_t kNeedOverhead = uint64_t{512} << 20;

// The memory an evaluation of a problem with this footprint needs; 0 footprint (not known): 2 GiB.
uint64_t memory_need(int64_t footprint_bytes);

// $KAGENT_GPU_ADMISSION_DIR, else /tmp/kagent-gpu-admission (not $TMPDIR: processes with
// private temp folders must meet there).
std::string default_admission_folder();

struct AdmissionRequest {
  uint64_t bytes = 0;     // ignored when exclusive
  bool exclusive = false; // the whole GPU: nothing else may hold a ticket
  pid_t worker = 0;       // the worker process that will use the memory (its NVML usage is counted in)
  std::string what;       // for the ledger and the notices: "evaluate 19_ReLU"
};

class GpuAdmission {
 public:
  using Notice = std::function<void(const std::string&)>;

  // `watch` (may be null) gives NVML's view of the GPU; `total_bytes` its memory.
  GpuAdmission(std::string uuid, uint64_t total_bytes, const GpuWatch* watch,
               std::string folder = default_admission_folder());

  // A held ticket; released when destroyed.
  class Ticket {
   public:
    Ticket() = default;
    ~Ticket();
    Ticket(Ticket&& o) noexcept;
    Ticket& operator=(Ticket&& o) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    double waited_seconds() const { return waited_; }
    bool shared() const { return shared_; }  // other tickets were held when it was granted
    void release();

   private:
    friend class GpuAdmission;
    const GpuAdmission* owner_ = nullptr;
    std::string id_;
    double waited_ = 0;
    bool shared_ = false;
  };

  // Blocks until the request is admitted. `notice` hears once that it waits, and once that it
  // got the memory.
  Ticket acquire(const AdmissionRequest& request, const Notice& notice) const;
  // The same without waiting: nullopt when the memory is not free now (for work that is only
  // worth doing at once, such as a warm-up).
  std::optional<Ticket> try_acquire(const AdmissionRequest& request) const;

  // Whether tickets other than `mine` are held now (a failure may be theirs).
  bool others_hold(const Ticket* mine = nullptr) const;

  const std::string& ledger_path() const { return ledger_; }
  uint64_t capacity() const { return capacity_; }

  // The decision, on a ledger's entries (JSON objects: id, bytes, exclusive, state, seq, worker)
  // and NVML's process usage: whether `id` may go now, else why not. Exposed for tests.
  struct Decision {
    bool admit = false;
    uint64_t taken = 0;     // by others
    int holders = 0;        // other tickets held
    std::string why;        // when not admitted
  };
  static Decision decide(const nlohmann::json& entries, const std::string& id, uint64_t capacity,
                         const std::vector<std::pair<pid_t, uint64_t>>& processes);

 private:
  template <class Fn>
  auto locked(Fn fn) const;  // fn(entries&) under the ledger's lock, written back when changed
  void remove(const std::string& id) const;
  // Adds the request to the ledger, then waits (or, without `wait`, gives up at once).
  std::optional<Ticket> take(const AdmissionRequest& request, const Notice& notice, bool wait) const;

  std::string uuid_;
  uint64_t capacity_;
  const GpuWatch* watch_;
  std::string folder_, ledger_, lock_;
  bool usable_ = true;
  mutable std::atomic<bool> warned_{false};  // the ledger failed once: said once
};

}  // namespace kagent
