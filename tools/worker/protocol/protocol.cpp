#include "worker/protocol/protocol.h"

#include "common/json_optional.h"

namespace kagent {

// Out of line (not the macro's inline ones): the worker converts these outside this file.
void to_json(nlohmann::json& j, const PrebuiltExtension& e) {
  j = {{"key", e.key}, {"library", e.library}, {"op_namespace", e.op_namespace}, {"functions", e.functions}};
  if (!e.binding.empty()) j["binding"] = e.binding;
  if (!e.build_error.empty()) j["build_error"] = e.build_error;
}

void from_json(const nlohmann::json& j, PrebuiltExtension& e) {
  e.key = get_or<std::string>(j, "key", "");
  e.library = get_or<std::string>(j, "library", "");
  e.op_namespace = get_or<std::string>(j, "op_namespace", "");
  e.functions = get_or(j, "functions", std::vector<std::string>{});
  e.binding = get_or<std::string>(j, "binding", "");
  e.build_error = get_or<std::string>(j, "build_error", "");
}

void to_json(nlohmann::json& j, const CandidateRef& c) {
  j = {{"format", c.format}};
  if (c.format == "kernelbench") {
    j["path"] = c.path;
    j["extensions"] = c.extensions;
    j["extension_reasons"] = c.extension_reasons;
  } else {
    j["artifact"] = c.artifact;
    j["op_name"] = c.op_name;
    j["kernels"] = c.kernels;
  }
}

void from_json(const nlohmann::json& j, CandidateRef& c) {
  c = CandidateRef();
  c.format = get_or<std::string>(j, "format", "cuda");
  c.artifact = get_or<std::string>(j, "artifact", "");
  c.op_name = get_or<std::string>(j, "op_name", "");
  c.path = get_or<std::string>(j, "path", "");
  c.kernels = get_or(j, "kernels", std::vector<std::string>{});
  c.extensions = get_or(j, "extensions", std::vector<PrebuiltExtension>{});
  c.extension_reasons = get_or(j, "extension_reasons", std::map<std::string, std::string>{});
}

namespace protocol {

void to_json(nlohmann::json& j, const HelloReply& r) {
  j = {{"device", r.device}, {"pid", r.pid}, {"sandbox", r.sandbox}};
  if (!r.timing_lock.empty()) j["timing_lock"] = r.timing_lock;
  if (!r.startup.empty()) j["startup"] = r.startup;
}
void from_json(const nlohmann::json& j, HelloReply& r) {
  r.device = j.value("device", nlohmann::json()).get<DeviceInfo>();
  r.pid = get_or(j, "pid", 0);
  r.sandbox = get_or(j, "sandbox", nlohmann::json::object());
  r.timing_lock = get_or<std::string>(j, "timing_lock", "");
  r.startup = get_or(j, "startup", nlohmann::json::object());
}

void to_json(nlohmann::json& j, const LoadProblemRequest& r) { j = {{"path", r.path}}; }
void from_json(const nlohmann::json& j, LoadProblemRequest& r) { r.path = j.at("path").get<std::string>(); }
void to_json(nlohmann::json& j, const PrepareRequest& r) { j = {{"path", r.path}, {"compile_warm", r.compile_warm}}; }
void from_json(const nlohmann::json& j, PrepareRequest& r) {
  r.path = j.at("path").get<std::string>();
  r.compile_warm = j.value("compile_warm", false);
}

void to_json(nlohmann::json& j, const EvaluateRequest& r) {
  j = {{"problem", r.problem}, {"candidate", r.candidate}, {"options", r.options}};
  if (r.trusted_eager_ms) j["trusted_eager_ms"] = *r.trusted_eager_ms;
}
void from_json(const nlohmann::json& j, EvaluateRequest& r) {
  r.problem = j.at("problem").get<std::string>();
  r.candidate = j.at("candidate").get<CandidateRef>();
  r.options = j.value("options", nlohmann::json::object()).get<EvalOptions>();
  if (j.contains("trusted_eager_ms") && j["trusted_eager_ms"].is_number())
    r.trusted_eager_ms = j["trusted_eager_ms"].get<double>();
}

void to_json(nlohmann::json& j, const BaselinesRequest& r) { j = {{"problem", r.problem}, {"options", r.options}}; }
void from_json(const nlohmann::json& j, BaselinesRequest& r) {
  r.problem = j.at("problem").get<std::string>();
  r.options = j.value("options", nlohmann::json::object()).get<EvalOptions>();
}

void to_json(nlohmann::json& j, const BaselinesReply& r) {
  j = {{"compiled_error", r.compiled_error}, {"cache_hit", r.cache_hit}};
  put_optional(j, "eager", r.eager);
  put_optional(j, "compiled", r.compiled);
  put_optional(j, "recheck", r.recheck);
}
void from_json(const nlohmann::json& j, BaselinesReply& r) {
  get_optional(j, "eager", r.eager);
  get_optional(j, "compiled", r.compiled);
  r.compiled_error = get_or<std::string>(j, "compiled_error", "");
  r.cache_hit = get_or(j, "cache_hit", false);
  get_optional(j, "recheck", r.recheck);
}

void to_json(nlohmann::json& j, const ErrorReply& r) { j = {{"kind", r.kind}, {"message", r.message}}; }
void from_json(const nlohmann::json& j, ErrorReply& r) {
  r.kind = get_or<std::string>(j, "kind", "error");
  r.message = get_or<std::string>(j, "message", "");
}

void to_json(nlohmann::json& j, const HelloRequest&) { j = nlohmann::json::object(); }
void from_json(const nlohmann::json&, HelloRequest&) {}
void to_json(nlohmann::json& j, const PrepareReply&) { j = nullptr; }
void from_json(const nlohmann::json&, PrepareReply&) {}
void to_json(nlohmann::json& j, const ShutdownRequest&) { j = nlohmann::json::object(); }
void from_json(const nlohmann::json&, ShutdownRequest&) {}
void to_json(nlohmann::json& j, const ShutdownReply&) { j = nullptr; }
void from_json(const nlohmann::json&, ShutdownReply&) {}

Op op_of(const nlohmann::json& line) {
  if (!line.is_object() || !line.contains("op") || !line["op"].is_string())
    throw std::invalid_argument("a request needs an \"op\"");
  return enum_value(kOpNames, line["op"].get<std::string>(), "op");
}

nlohmann::json error_line(const std::string& kind, const std::string& message) {
  return {{"ok", false}, {"error", ErrorReply{kind, message}}};
}

namespace {
constexpr EnumNames<LockEvent::Kind, 3> kLockEventNames{{
    {LockEvent::Kind::Waiting, "waiting"},
    {LockEvent::Kind::Held, "held"},
    {LockEvent::Kind::Broken, "broken"},
}};
}  // namespace

nlohmann::json lock_line(const LockEvent& e) {
  nlohmann::json j = {{"lock", enum_name(kLockEventNames, e.kind, "held")}, {"mode", lock_mode_name(e.mode)}};
  if (e.kind == LockEvent::Kind::Held) j["waited"] = e.waited_s;
  if (!e.why.empty()) j["why"] = e.why;
  return j;
}

std::optional<LockEvent> lock_event_of(const nlohmann::json& line) {
  if (!line.is_object() || line.contains("ok") || !line.contains("lock") || !line["lock"].is_string()) return std::nullopt;
  LockEvent e;
  try {
    e.kind = enum_value(kLockEventNames, line["lock"].get<std::string>(), "lock event");
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  e.mode = lock_mode_from_name(get_or<std::string>(line, "mode", "none")).value_or(LockMode::None);
  e.waited_s = get_or(line, "waited", 0.0);
  e.why = get_or<std::string>(line, "why", "");
  return e;
}

nlohmann::json phase_line(std::string_view phase) { return {{"phase", phase}}; }

std::optional<std::string> phase_of(const nlohmann::json& line) {
  if (!line.is_object() || line.contains("ok") || line.contains("lock")) return std::nullopt;
  const auto p = line.find("phase");
  if (p == line.end() || !p->is_string() || p->get_ref<const std::string&>().empty()) return std::nullopt;
  return p->get<std::string>();
}

}  // namespace protocol
}  // namespace kagent
