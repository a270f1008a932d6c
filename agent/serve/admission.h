// The bound on evaluations admitted at once (running on a worker, compiling, or waiting for
// one): past it a request is refused with 429 and Retry-After instead of queueing without end.
#pragma once

#include <atomic>
#include <cstddef>

namespace kagent::serve {

class Admission {
 public:
  explicit Admission(size_t limit) : limit_(limit) {}
  size_t limit() const { return limit_; }
  size_t admitted() const { return admitted_.load(); }

  // Holds one place while alive; check ok() first.
  class Ticket {
   public:
    explicit Ticket(Admission& a) : a_(a), ok_(a.admitted_.fetch_add(1) < a.limit_) {}
    ~Ticket() { a_.admitted_.fetch_sub(1); }
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    bool ok() const { return ok_; }

   private:
    Admission& a_;
    bool ok_;
  };

 private:
  size_t limit_;
  std::atomic<size_t> admitted_{0};
};

}  // namespace kagent::serve
