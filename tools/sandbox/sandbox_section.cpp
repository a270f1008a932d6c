#include "sandbox/sandbox_section.h"

#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace kagent::sandbox {

namespace {

struct PropertySource {
  const char* property;
  const char* report_key;                 // the hello report's field naming the mechanism
  std::vector<std::string> mechanisms;    // whose notes say why one is missing
};

const std::vector<PropertySource>& sources() {
  static const std::vector<PropertySource> s = {
      {"network", "network", {"netns", "seccomp", "user namespace"}},
      {"filesystem", "filesystem", {"landlock", "mount_ns", "uid", "notify"}},
      {"processes", "processes", {"cgroup_pids", "rlimit_nproc", "notify", "uid"}},
      {"host_memory", "memory", {"rlimit_data", "watchdog"}},
      {"file_size", "file_size", {"rlimit_fsize"}},
      {"cpu_time", "cpu_time", {"rlimit_cpu"}},
  };
  return s;
}

bool starts_with_mechanism(const std::string& note, const std::string& mechanism) {
  return note.rfind(mechanism + ":", 0) == 0;
}

}  // namespace

nlohmann::json result_section(const nlohmann::json& report, const std::optional<Violations>& violations) {
  nlohmann::json properties = nlohmann::json::object();
  const bool enabled = report.value("enabled", false);
  std::vector<std::string> notes;
  if (report.contains("notes") && report["notes"].is_array())
    for (const auto& n : report["notes"])
      if (n.is_string()) notes.push_back(n.get<std::string>());
  std::vector<std::string> left_out;
  if (report.contains("cuda_fallback") && report["cuda_fallback"].is_object())
    left_out = report["cuda_fallback"].value("left_out", std::vector<std::string>{});
  const bool watchdog = report.contains("memory_watchdog");
  for (const auto& src : sources()) {
    nlohmann::json p;
    std::string mechanism = report.value(src.report_key, std::string("none"));
    nlohmann::json layers = nlohmann::json::array();
    if (report.contains("layers") && report["layers"].contains(src.property))
      layers = report["layers"][src.property];
    if (std::string(src.property) == "host_memory") {
      // The orchestrator's RSS watchdog speaks first; RLIMIT_DATA is the kernel's backstop.
      if (watchdog) layers.push_back("watchdog");
      if (mechanism != "none") layers.push_back(mechanism);
      if (watchdog) mechanism = "watchdog";
    }
    if (layers.empty() && mechanism != "none") layers.push_back(mechanism);
    p["mechanism"] = mechanism;
    p["layers"] = layers;
    if (mechanism == "none") {
      std::string why;
      if (report.is_null() || report.empty()) why = "no worker reported its sandbox";
      else if (!enabled) why = "KAGENT_SANDBOX=off";
      for (const auto& note : notes)
        for (const auto& m : src.mechanisms)
          if (starts_with_mechanism(note, m)) why += (why.empty() ? "" : "; ") + note;
      for (const auto& layer : left_out)
        for (const auto& m : src.mechanisms)
          if (layer == m) why += (why.empty() ? "" : "; ") + layer + ": left out, CUDA finds no device under it here";
      p["why"] = why.empty() ? "no mechanism of this kernel held it" : why;
    }
    properties[src.property] = std::move(p);
  }
  nlohmann::json section = {{"properties", properties},
                            {"violations_reported", report.value("violations_reported", false)}};
  if (report.contains("redirected")) section["redirected"] = report["redirected"];
  if (report.contains("scratch")) section["scratch"] = report["scratch"];
  if (!left_out.empty()) section["left_out_for_cuda"] = left_out;
  if (report.contains("limits")) section["limits"] = report["limits"];
  if (violations) {
    section["violations"] = {{"network", violations->network},
                             {"filesystem", violations->filesystem},
                             {"processes", violations->processes},
                             {"details", violations->details},
                             {"killed", violations->killed.size()}};
  } else {
    section["violations"] = nullptr;  // the worker did not answer: what it refused is not known
  }
  return section;
}

std::vector<std::string> unheld_properties(const nlohmann::json& section) {
  std::vector<std::string> out;
  if (!section.contains("properties")) return out;
  for (const char* p : kProperties)
    if (section["properties"].contains(p) && section["properties"][p].value("mechanism", "none") == "none")
      out.push_back(p);
  return out;
}

std::set<std::string, std::less<>> required_properties(const char* value) {
  std::set<std::string, std::less<>> out;
  if (!value) return out;
  for (std::string_view name : comma_separated(value)) {
    bool known = false;
    for (const char* p : kProperties) known = known || name == p;
    if (!known)
      throw std::invalid_argument(fmt::format(
          "KAGENT_SANDBOX_REQUIRE: unknown property '{}' (known: network, filesystem, processes, host_memory, "
          "file_size, cpu_time)",
          name));
    out.emplace(name);
  }
  return out;
}

std::string unmet_requirement(const nlohmann::json& section, const std::set<std::string, std::less<>>& required) {
  std::string missing;
  for (const auto& p : unheld_properties(section)) {
    if (!required.contains(p)) continue;
    const std::string why = section["properties"][p].value("why", "");
    missing += fmt::format("{}{} ({})", missing.empty() ? "" : "; ", p, why);
  }
  if (missing.empty()) return {};
  return "the sandbox holds no mechanism for a required property (KAGENT_SANDBOX_REQUIRE): " + missing;
}

}  // namespace kagent::sandbox
