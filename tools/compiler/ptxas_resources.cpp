#include "compiler/ptxas_resources.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

namespace kagent {

std::string demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return (status == 0 && out) ? std::string(out.get()) : name;
}

namespace {

int64_t to_i64(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }

}  // namespace

std::vector<KernelResources> parse_ptxas_resources(std::string_view log) {
  // Formats seen (CUDA 11-13):
  //   ptxas info    : Compiling entry function '_Z4reluPKfPfl' for 'sm_90a'
  //   ptxas info    : Function properties for _Z4reluPKfPfl
  //       8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
  //   ptxas info    : Used 10 registers, used 0 barriers, 1024 bytes smem, 380 bytes cmem[0]
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex props_re(R"(Function properties for (\S+))");
  static const std::regex frame_re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_re(R"(ptxas info\s*: Used (\d+) registers(.*))");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  static const std::regex cmem_re(R"((\d+) bytes cmem\[\d+\])");

  std::vector<KernelResources> out;
  std::string current_entry;   // mangled name of the entry whose block we are in
  std::string props_for;       // mangled name the last "Function properties" line named
  KernelResources pending;     // frame/spill values seen before the "Used" line
  bool in_entry = false;

  std::istringstream in{std::string(log)};
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry_re)) {
      current_entry = m[1];
      in_entry = true;
      pending = KernelResources{};
      pending.kernel = demangle(current_entry);
    } else if (std::regex_search(line, m, props_re)) {
      props_for = m[1];
    } else if (std::regex_search(line, m, frame_re)) {
      if (in_entry && props_for == current_entry) {
        pending.stack_frame_bytes = to_i64(m[1]);
        pending.spill_store_bytes = to_i64(m[2]);
        pending.spill_load_bytes = to_i64(m[3]);
      }
    } else if (std::regex_search(line, m, used_re)) {
      if (!in_entry) continue;  // a device function's own usage
      pending.registers = static_cast<int>(to_i64(m[1]));
      std::string rest = m[2];
      std::smatch r;
      if (std::regex_search(rest, r, smem_re)) pending.shared_static_bytes = to_i64(r[1]);
      int64_t cmem = 0;
      for (auto it = std::sregex_iterator(rest.begin(), rest.end(), cmem_re); it != std::sregex_iterator(); ++it)
        cmem += to_i64((*it)[1]);
      pending.constant_bytes = cmem;
      out.push_back(pending);
      in_entry = false;
    } else if (line.find("Compiling function") != std::string::npos) {
      in_entry = false;  // a non-entry function's block starts
    }
  }
  return out;
}

}  // namespace kagent
