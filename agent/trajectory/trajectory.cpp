#include "trajectory/trajectory.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <regex>
#include <stdexcept>
#include <utility>

#include "build_info.h"
#include "common/enum_names.h"
#include "common/json_optional.h"

namespace kagent::traj {

namespace {

constexpr EnumNames<SampleStatus, 4> kStatusNames{{
    {SampleStatus::Running, "running"},
    {SampleStatus::Finished, "finished"},
    {SampleStatus::Failed, "failed"},
    {SampleStatus::Stopped, "stopped"},
}};

constexpr EnumNames<StopReason, 6> kStopNames{{
    {StopReason::None, "none"},
    {StopReason::TurnLimit, "turn_limit"},
    {StopReason::TargetSpeedup, "target_speedup"},
    {StopReason::Budget, "budget"},
    {StopReason::Cancelled, "cancelled"},
    {StopReason::Error, "error"},
}};

// The source with every string literal emptied (docstrings too) and every comment dropped,
// newlines kept: prose ("x (torch.Tensor): input of shape (N, D)") is no operation call.
std::string code_only(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  const size_t n = source.size();
  for (size_t i = 0; i < n;) {
    const char c = source[i];
    if (source.compare(i, 3, "\"\"\"") == 0 || source.compare(i, 3, "'''") == 0) {
      const size_t close = source.find(source.substr(i, 3), i + 3);
      const size_t end = close == std::string::npos ? n : close + 3;
      const auto at = [&](size_t k) { return source.begin() + static_cast<std::ptrdiff_t>(k); };
      out += "\"\"";
      out.append(static_cast<size_t>(std::count(at(i), at(end), '\n')), '\n');
      i = end;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < n && source[j] != c && source[j] != '\n') j += source[j] == '\\' ? 2 : 1;
      out += "\"\"";
      i = j < n && source[j] == c ? j + 1 : j;
    } else if (c == '#') {
      while (i < n && source[i] != '\n') ++i;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// The body of `def forward(...)` in code without strings or comments: the lines after its
// signature (which may span lines) that are indented deeper than the def.
std::string forward_body(const std::string& code) {
  static const std::regex def(R"(\bdef\s+forward\s*\()");
  std::smatch m;
  if (!std::regex_search(code, m, def)) return {};
  const auto pos = static_cast<size_t>(m.position(0));
  auto line_start = code.rfind('\n', pos);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  const size_t def_indent = pos - line_start;
  // The parameter list's closing parenthesis, then the end of that line.
  size_t i = pos + static_cast<size_t>(m.length(0)) - 1;
  for (int depth = 0; i < code.size(); ++i) {
    if (code[i] == '(') ++depth;
    if (code[i] == ')' && --depth == 0) break;
  }
  const auto eol = code.find('\n', i);
  if (eol == std::string::npos) return {};
  std::string body;
  for (size_t at = eol + 1; at < code.size();) {
    size_t next = code.find('\n', at);
    if (next == std::string::npos) next = code.size();
    const std::string line = code.substr(at, next - at);
    const size_t indent = line.find_first_not_of(" \t");
    if (indent != std::string::npos) {
      if (indent <= def_indent) break;
      body += line;
      body += '\n';
    }
    at = next + 1;
  }
  return body;
}

}  // namespace

std::string op_type_for(std::optional<int> level, const std::string& source) {
  if (level) {
    if (*level == 1) return kOpSingle;
    if (*level == 2) return kOpFused;
    if (*level == 3) return kOpModel;
  }
  // Heuristic: count operation calls in forward()'s code (its docstring and comments are not
  // code); one is a single op, more is fused.
  const std::string body = forward_body(code_only(source));
  if (body.empty()) return kOpUnknown;
  static const std::regex call(R"((\b[A-Za-z_]\w*(\.\w+)*\s*\()|(\s[-+*/@]=?\s))");
  int ops = 0;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), call); it != std::sregex_iterator(); ++it) ++ops;
  if (ops == 0) return kOpUnknown;
  return ops == 1 ? kOpSingle : kOpFused;
}

ProblemInfo problem_info_from_spec(const ProblemSpec& spec) {
  ProblemInfo p;
  p.name = spec.name;
  p.path = spec.path;
  p.sha256 = spec.sha256;
  p.level = spec.level;
  p.op_type = op_type_for(spec.level, spec.source);
  return p;
}

Versions Versions::from_build() {
  Versions v;
  v.kagent = build::kVersion;
  v.torch = build::kTorchVersion;
  v.cuda = build::kCudaVersion;
  return v;
}

bool Turn::correct() const { return !error && eval && eval->status == Status::Correct; }

bool Turn::correct_under(Policy policy) const {
  return !error && eval && verdict_under(*eval, policy).status == Status::Correct;
}

std::optional<double> Turn::speedup_eager() const {
  if (!eval || !eval->timing) return std::nullopt;
  return eval->timing->speedup_eager;
}

std::optional<double> Turn::speedup_compiled() const {
  if (!eval || !eval->timing) return std::nullopt;
  return eval->timing->speedup_compiled;
}

TokenCounts Trajectory::total_tokens() const {
  TokenCounts t;
  for (const auto& turn : turns) t += turn.tokens;
  return t;
}

std::string to_string(SampleStatus s) { return enum_name(kStatusNames, s, "running"); }

SampleStatus sample_status_from_string(const std::string& s) { return enum_value(kStatusNames, s, "sample status"); }

std::string to_string(StopReason r) { return enum_name(kStopNames, r, "none"); }

StopReason stop_reason_from_string(const std::string& s) { return enum_value(kStopNames, s, "stop reason"); }

std::string now_iso8601() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

// ---- JSON -----------------------------------------------------------------------------

void to_json(nlohmann::json& j, const ProblemInfo& p) {
  j = {{"name", p.name}, {"path", p.path}, {"sha256", p.sha256}, {"op_type", p.op_type}};
  put_optional(j, "level", p.level);
}

void from_json(const nlohmann::json& j, ProblemInfo& p) {
  p.name = get_or<std::string>(j, "name", "");
  p.path = get_or<std::string>(j, "path", "");
  p.sha256 = get_or<std::string>(j, "sha256", "");
  p.op_type = get_or<std::string>(j, "op_type", kOpUnknown);
  get_optional(j, "level", p.level);
}

void to_json(nlohmann::json& j, const Sampling& s) {
  j = nlohmann::json::object();
  put_optional(j, "temperature", s.temperature);
  put_optional(j, "top_p", s.top_p);
  put_optional(j, "top_k", s.top_k);
  put_optional(j, "max_tokens", s.max_tokens);
  put_optional(j, "reasoning_effort", s.reasoning_effort);
  put_optional(j, "seed", s.seed);
  j["extra"] = s.extra.is_null() ? nlohmann::json::object() : s.extra;
}

void from_json(const nlohmann::json& j, Sampling& s) {
  get_optional(j, "temperature", s.temperature);
  get_optional(j, "top_p", s.top_p);
  get_optional(j, "top_k", s.top_k);
  get_optional(j, "max_tokens", s.max_tokens);
  get_optional(j, "reasoning_effort", s.reasoning_effort);
  get_optional(j, "seed", s.seed);
  s.extra = get_or<nlohmann::json>(j, "extra", nlohmann::json::object());
}

void to_json(nlohmann::json& j, const ModelInfo& m) {
  j = {{"provider", m.provider}, {"model", m.model}, {"base_url", m.base_url}, {"sampling", m.sampling}};
}

void from_json(const nlohmann::json& j, ModelInfo& m) {
  m.provider = get_or<std::string>(j, "provider", "");
  m.model = get_or<std::string>(j, "model", "");
  m.base_url = get_or<std::string>(j, "base_url", "");
  m.sampling = get_or<Sampling>(j, "sampling", Sampling{});
}

void to_json(nlohmann::json& j, const Versions& v) {
  j = {{"kagent", v.kagent}, {"torch", v.torch}, {"cuda", v.cuda}, {"gpu", v.gpu}};
}

void from_json(const nlohmann::json& j, Versions& v) {
  v.kagent = get_or<std::string>(j, "kagent", "");
  v.torch = get_or<std::string>(j, "torch", "");
  v.cuda = get_or<std::string>(j, "cuda", "");
  v.gpu = get_or<std::string>(j, "gpu", "");
}

void to_json(nlohmann::json& j, const Message& m) { j = {{"role", m.role}, {"content", m.content}}; }

void from_json(const nlohmann::json& j, Message& m) {
  m.role = j.at("role").get<std::string>();
  m.content = get_or<std::string>(j, "content", "");
}

void to_json(nlohmann::json& j, const TokenCounts& t) {
  j = {{"prompt", t.prompt}, {"completion", t.completion}, {"reasoning", t.reasoning}, {"total", t.total()}};
}

void from_json(const nlohmann::json& j, TokenCounts& t) {
  t.prompt = get_or<int64_t>(j, "prompt", 0);
  t.completion = get_or<int64_t>(j, "completion", 0);
  t.reasoning = get_or<int64_t>(j, "reasoning", 0);
}

void to_json(nlohmann::json& j, const TurnError& e) { j = {{"kind", e.kind}, {"message", e.message}}; }

void from_json(const nlohmann::json& j, TurnError& e) {
  e.kind = get_or<std::string>(j, "kind", "");
  e.message = get_or<std::string>(j, "message", "");
}

void to_json(nlohmann::json& j, const Turn& t) {
  j = {{"index", t.index},
       {"messages", t.messages},
       {"reasoning", t.reasoning},
       {"answer", t.answer},
       {"code", t.code},
       {"feedback", t.feedback},
       {"tokens", t.tokens},
       {"llm_seconds", t.llm_seconds},
       {"eval_seconds", t.eval_seconds},
       {"correct", t.correct()},  // derived, for readers that do not parse eval
       {"started_at", t.started_at},
       {"finished_at", t.finished_at},
       {"extra", t.extra}};
  put_optional(j, "eval", t.eval);
  put_optional(j, "reward", t.reward);
  put_optional(j, "return", t.return_);
  put_optional(j, "error", t.error);
}

void from_json(const nlohmann::json& j, Turn& t) {
  t.index = get_or<int>(j, "index", 0);
  t.messages = get_or<std::vector<Message>>(j, "messages", {});
  t.reasoning = get_or<std::string>(j, "reasoning", "");
  t.answer = get_or<std::string>(j, "answer", "");
  t.code = get_or<std::string>(j, "code", "");
  t.feedback = get_or<std::string>(j, "feedback", "");
  t.tokens = get_or<TokenCounts>(j, "tokens", TokenCounts{});
  t.llm_seconds = get_or<double>(j, "llm_seconds", 0.0);
  t.eval_seconds = get_or<double>(j, "eval_seconds", 0.0);
  t.started_at = get_or<std::string>(j, "started_at", "");
  t.finished_at = get_or<std::string>(j, "finished_at", "");
  t.extra = j.value("extra", nlohmann::json());
  get_optional(j, "eval", t.eval);
  get_optional(j, "reward", t.reward);
  get_optional(j, "return", t.return_);
  get_optional(j, "error", t.error);
}

void to_json(nlohmann::json& j, const Trajectory& t) {
  j = {{"schema_version", t.schema_version},
       {"run_id", t.run_id},
       {"problem", t.problem},
       {"model", t.model},
       {"sample", t.sample},
       {"max_turns", t.max_turns},
       {"turns", t.turns},
       {"versions", t.versions},
       {"started_at", t.started_at},
       {"updated_at", t.updated_at},
       {"finished_at", t.finished_at},
       {"status", to_string(t.status)},
       {"stop_reason", to_string(t.stop_reason)},
       {"error", t.error},
       {"tokens", t.total_tokens()}};  // derived
  put_optional(j, "best_turn", t.best_turn);
}

void from_json(const nlohmann::json& j, Trajectory& t) {
  t.schema_version = get_or<int>(j, "schema_version", kSchemaVersion);
  if (t.schema_version > kSchemaVersion)
    throw std::runtime_error("trajectory schema_version " + std::to_string(t.schema_version) +
                             " is newer than this kagent reads (" + std::to_string(kSchemaVersion) + ")");
  t.run_id = get_or<std::string>(j, "run_id", "");
  t.problem = get_or<ProblemInfo>(j, "problem", ProblemInfo{});
  t.model = get_or<ModelInfo>(j, "model", ModelInfo{});
  t.sample = j.at("sample").get<int>();
  t.max_turns = get_or<int>(j, "max_turns", 0);
  t.turns = get_or<std::vector<Turn>>(j, "turns", {});
  t.versions = get_or<Versions>(j, "versions", Versions{});
  t.started_at = get_or<std::string>(j, "started_at", "");
  t.updated_at = get_or<std::string>(j, "updated_at", "");
  t.finished_at = get_or<std::string>(j, "finished_at", "");
  t.status = sample_status_from_string(get_or<std::string>(j, "status", "running"));
  t.stop_reason = stop_reason_from_string(get_or<std::string>(j, "stop_reason", "none"));
  t.error = get_or<std::string>(j, "error", "");
  get_optional(j, "best_turn", t.best_turn);
}

}  // namespace kagent::traj
