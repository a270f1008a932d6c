#include "sandbox/sandbox_policy.h"
#include "common/switch_value.h"

#include <array>
#include <charconv>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace kagent::sandbox {

namespace {

constexpr std::array kMechanisms = {mechanism::kNetNs,       mechanism::kSeccomp,     mechanism::kNotify,
                                    mechanism::kLandlock,    mechanism::kMountNs,     mechanism::kUid,
                                    mechanism::kRlimitNproc, mechanism::kRlimitData,  mechanism::kRlimitFsize,
                                    mechanism::kRlimitCpu,   mechanism::kWatchdog,
                                    mechanism::kCgroupPids};

template <class T>
T parse_number(const char* var, std::string_view text, T min, T max) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max)
    throw std::invalid_argument(fmt::format("{}: '{}' is not a number from {} to {}", var, text, min, max));
  return value;
}

bool parse_switch(const char* var, std::string_view text) {
  if (const auto on = switch_value(text)) return *on;
  throw std::invalid_argument(fmt::format("{}: '{}' is neither on nor off", var, text));
}

}  // namespace

SandboxPolicy SandboxPolicy::from_environment(const std::function<const char*(const char*)>& get_env) {
  SandboxPolicy p;
  auto get = [&](const char* var) -> std::optional<std::string_view> {
    const char* v = get_env(var);
    if (!v) return std::nullopt;
    return std::string_view(v);
  };
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  if (auto v = get("KAGENT_SANDBOX"); v && !v->empty()) p.enabled = parse_switch("KAGENT_SANDBOX", *v);
  if (auto v = get("KAGENT_SANDBOX_MEMORY_MB"); v && !v->empty())
    p.memory_bytes = parse_number<uint64_t>("KAGENT_SANDBOX_MEMORY_MB", *v, 1, uint64_t{1} << 30) * kMiB;
  if (auto v = get("KAGENT_SANDBOX_PROCESSES"); v && !v->empty())
    p.processes = parse_number<int>("KAGENT_SANDBOX_PROCESSES", *v, 1, 1 << 20);
  if (auto v = get("KAGENT_SANDBOX_FILE_SIZE_MB"); v && !v->empty())
    p.file_size_bytes = parse_number<uint64_t>("KAGENT_SANDBOX_FILE_SIZE_MB", *v, 1, uint64_t{1} << 30) * kMiB;
  if (auto v = get("KAGENT_SANDBOX_CPU_SECONDS"); v && !v->empty())
    p.cpu_seconds_per_request = parse_number<int>("KAGENT_SANDBOX_CPU_SECONDS", *v, 1, 1 << 24);
  if (auto v = get("KAGENT_SANDBOX_SCRATCH")) p.scratch = std::string(*v);
  if (auto v = get("KAGENT_SANDBOX_SCRATCH_DISPOSABLE"); v && !v->empty())
    p.scratch_disposable = parse_switch("KAGENT_SANDBOX_SCRATCH_DISPOSABLE", *v);
  if (auto v = get("KAGENT_SANDBOX_ORCHESTRATOR_PID"); v && !v->empty())
    p.orchestrator_pid = parse_number<int>("KAGENT_SANDBOX_ORCHESTRATOR_PID", *v, 0, 1 << 30);
  if (auto v = get("KAGENT_SANDBOX_UID"); v && !v->empty())
    p.uid = parse_number<uint32_t>("KAGENT_SANDBOX_UID", *v, 0, 4294967294u);
  if (auto v = get("KAGENT_SANDBOX_DISABLE")) {
    for (std::string_view name : comma_separated(*v)) {
      bool known = false;
      for (const char* m : kMechanisms) known = known || name == m;
      if (!known) throw std::invalid_argument(fmt::format("KAGENT_SANDBOX_DISABLE: unknown mechanism '{}'", name));
      p.disabled.emplace(name);
    }
  }
  return p;
}

std::vector<std::string_view> comma_separated(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

SandboxPolicy SandboxPolicy::from_environment() {
  return from_environment([](const char* var) { return std::getenv(var); });
}

std::vector<std::string> SandboxPolicy::to_environment() const {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  std::string disabled_list;
  for (const auto& m : disabled) disabled_list += (disabled_list.empty() ? "" : ",") + m;
  return {
      fmt::format("KAGENT_SANDBOX={}", enabled ? "on" : "off"),
      fmt::format("KAGENT_SANDBOX_MEMORY_MB={}", (memory_bytes + kMiB - 1) / kMiB),
      fmt::format("KAGENT_SANDBOX_PROCESSES={}", processes),
      fmt::format("KAGENT_SANDBOX_FILE_SIZE_MB={}", (file_size_bytes + kMiB - 1) / kMiB),
      fmt::format("KAGENT_SANDBOX_CPU_SECONDS={}", cpu_seconds_per_request),
      fmt::format("KAGENT_SANDBOX_SCRATCH={}", scratch),
      fmt::format("KAGENT_SANDBOX_SCRATCH_DISPOSABLE={}", scratch_disposable ? "on" : "off"),
      fmt::format("KAGENT_SANDBOX_ORCHESTRATOR_PID={}", orchestrator_pid),
      fmt::format("KAGENT_SANDBOX_UID={}", uid ? std::to_string(*uid) : std::string()),
      fmt::format("KAGENT_SANDBOX_DISABLE={}", disabled_list),
  };
}

}  // namespace kagent::sandbox
