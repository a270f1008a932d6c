// How many jobs a cluster node holds beyond those its workers run (kagent serve --queue): enough
// to keep its workers fed, no more. A job a node holds waits there; one left on the stream goes
// to whichever node runs out of work first, so a node that hoards makes the others wait for it at
// a batch's end. Enough is the builds under way while the workers use up what is built (its
// workers' answers a second, workers over an evaluation's seconds, times a build's seconds) plus
// one built answer for each worker; at most one per compile slot (what the node's consumers took
// before), and that until the node has seen a job through. From the jobs' own seconds, not from
// the time between them: an idle spell between two batches says nothing of the next.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>

namespace kagent::serve {

class NodeRoom {
 public:
  NodeRoom(size_t workers, size_t compile_slots);

  // Whether a node that holds `held` jobs, `on_workers` of them with a worker, takes another.
  bool has_room(size_t held, size_t on_workers) const;
  // The jobs it may hold beyond those on its workers, now.
  size_t most_ahead() const;
  // One job done: its build's seconds (0 for a cached build) and its evaluation's (the worker's
  // time, waits for the GPU's lock included); an evaluation of 0 s (none ran) is not counted.
  void finished(double build_seconds, double eval_seconds);

 private:
  const size_t workers_, compile_slots_;
  mutable std::mutex mu_;
  std::optional<double> build_s_;  // moving averages
  std::optional<double> eval_s_;
};

}  // namespace kagent::serve
