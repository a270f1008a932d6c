#include "compiler/compile_diagnostics.h"

#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "compiler/binding_generator.h"
#include "result/eval_result.h"

namespace kagent {

namespace {

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      if (!cur.empty() && cur.back() == '\r') cur.pop_back();
      lines.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

// EDG prints static_assert failures as: static assertion failed with "kagent: ..."
std::string unwrap_static_assert(const std::string& msg) {
  static const std::regex edg(R"(^static assertion failed with \"(.*)\"$)");
  static const std::regex gcc(R"(^static assertion failed: (.*)$)");
  std::smatch m;
  if (std::regex_match(msg, m, edg) || std::regex_match(msg, m, gcc)) {
    std::string inner = m[1];
    if (inner.rfind("kagent:", 0) == 0) return inner;
  }
  return msg;
}

bool is_forward_undeclared(const std::string& msg) {
  return msg == "identifier \"forward\" is undefined" || msg == "the global scope has no \"forward\"" ||
         msg.find("'forward' was not declared") != std::string::npos ||
         msg.find("'::forward' has not been declared") != std::string::npos;
}

}  // namespace

std::string map_paths(std::string_view text, const DiagnosticsContext& ctx) {
  std::string s(text);
  for (const auto& [from, to] : ctx.replacements) s = replace_all(std::move(s), from, to);
  // /abs/.../include/ATen/core/Tensor.h -> ATen/core/Tensor.h (torch, CUDA, libstdc++ alike).
  static const std::regex inc(R"((^|[\s'"`(])/[^\s:'"`()]*/include/)");
  return std::regex_replace(s, inc, "$1");
}

std::vector<Diagnostic> parse_errors(std::string_view log, const DiagnosticsContext& ctx) {
  static const std::regex edg_re(
      R"(^(.*?)\((\d+)\): (catastrophic error|error|warning|remark)(?: #[\w-]+)?: (.*)$)");
  static const std::regex gcc_re(R"(^(.*?):(\d+):(\d+): (fatal error|error|warning|note): (.*)$)");
  static const std::regex gcc_src_re(R"(^\s*\d+\s\|(.*)$)");
  static const std::regex gcc_caret_re(R"(^\s*\|(.*)$)");
  static const std::regex ptxas_line_re(R"(^ptxas (.*?), line (\d+); (?:fatal|error)\s*: (.*)$)");
  static const std::regex ptxas_re(R"(^ptxas (?:fatal|error)\s*: (.*)$)");
  static const std::regex nvcc_re(R"(^nvcc (?:fatal|error)\s*: (.*)$)");
  static const std::regex undef_re(R"(^(?:(.*?):\(.*\): )?undefined reference to [`'](.*)'$)");
  static const std::regex ld_re(R"(^(?:\S*/)?ld(?:\.\w+)?: (.*)$)");
  static const std::regex driver_re(R"(^(?:\S*/)?(?:g\+\+|gcc|cc1plus|c\+\+)(?:-\d+)?: (?:fatal )?error: (.*)$)");

  // g++ quotes names with ‘ ’ under a UTF-8 locale (the GPU machines) and ' ' under C: one form,
  // so that every message check here and after reads the same text on every machine.
  const auto lines = split_lines(replace_all(replace_all(map_paths(log, ctx), "\u2018", "'"), "\u2019", "'"));
  const auto source_lines = split_lines(ctx.source);

  std::vector<Diagnostic> out;
  std::set<std::string> seen;
  auto add = [&](Diagnostic d) {
    d.message = unwrap_static_assert(d.message);
    if (d.file == ctx.display_name && d.line > ctx.user_lines && ctx.user_lines > 0) {
      d.in_binding = true;
      d.file = "<kagent binding>";
      d.line = 0;
      d.column = 0;
      d.source_line.clear();
    } else if (d.file == ctx.display_name && d.line > 0 && d.line <= static_cast<int>(source_lines.size())) {
      d.source_line = source_lines[d.line - 1];
    }
    if (d.message.rfind("kagent:", 0) == 0) d.in_binding = true;
    const std::string key = fmt::format("{}:{}:{}", d.file, d.line, d.message);
    if (seen.insert(key).second) out.push_back(std::move(d));
  };

  std::smatch m;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (std::regex_match(l, m, edg_re)) {
      const std::string sev = m[3];
      Diagnostic d{m[1], std::stoi(m[2]), 0, "cudafe", m[4], "", "", false};
      // Follow-up lines: echoed source, caret, "detected during ..." until a blank line.
      size_t j = i + 1;
      std::string echo;
      for (; j < lines.size() && !blank(lines[j]); ++j) {
        const std::string& f = lines[j];
        const std::string t = trim(f);
        if (!t.empty() && t.find_first_not_of('^') == std::string::npos) {
          d.column = static_cast<int>(f.find('^')) - 1;  // EDG indents the echo by 2
          if (d.column < 1) d.column = 1;
        } else if (t.rfind("operand types are:", 0) == 0 || t.rfind("argument types are:", 0) == 0 ||
                   t.rfind("object type is:", 0) == 0) {
          d.message += " (" + t + ")";  // says which types did not match
        } else if (t.rfind("detected during", 0) == 0) {
          if (d.context.empty()) d.context = t;
        } else if (echo.empty() && d.column == 0) {
          echo = f.size() >= 2 ? f.substr(2) : f;
        } else if (std::regex_match(f, edg_re) || std::regex_match(f, gcc_re)) {
          break;
        }
      }
      d.source_line = echo;
      i = j - 1;
      if (sev == "error" || sev == "catastrophic error") add(std::move(d));
    } else if (std::regex_match(l, m, gcc_re)) {
      const std::string sev = m[4];
      Diagnostic d{m[1], std::stoi(m[2]), std::stoi(m[3]), "gcc", m[5], "", "", false};
      size_t j = i + 1;
      std::smatch s;
      if (j < lines.size() && std::regex_match(lines[j], s, gcc_src_re)) {
        d.source_line = s[1].str().empty() ? "" : s[1].str().substr(1);
        ++j;
        if (j < lines.size() && std::regex_match(lines[j], s, gcc_caret_re)) ++j;
      }
      i = j - 1;
      if (sev == "error" || sev == "fatal error") add(std::move(d));
    } else if (std::regex_match(l, m, ptxas_line_re)) {
      add(Diagnostic{"ptxas", 0, 0, "ptxas", m[3], "", "", false});
    } else if (std::regex_match(l, m, ptxas_re)) {
      add(Diagnostic{"ptxas", 0, 0, "ptxas", m[1], "", "", false});
    } else if (std::regex_match(l, m, nvcc_re)) {
      add(Diagnostic{"nvcc", 0, 0, "nvcc", m[1], "", "", false});
    } else if (std::regex_search(l, m, undef_re)) {
      add(Diagnostic{"ld", 0, 0, "ld", "undefined reference to `" + m[2].str() + "'", "", "", false});
    } else if (std::regex_match(l, m, ld_re)) {
      const std::string msg = m[1];
      if (msg.find("in function") == std::string::npos && msg.find("warning:") == std::string::npos &&
          msg.find("note:") == std::string::npos && msg.find("undefined reference") == std::string::npos)
        add(Diagnostic{"ld", 0, 0, "ld", msg, "", "", false});
    } else if (std::regex_match(l, m, driver_re)) {
      add(Diagnostic{"gcc", 0, 0, "gcc", m[1], "", "", false});
    }
  }
  // collect2's summary says nothing the linker did not; keep it only when alone.
  if (out.size() > 1) {
    std::erase_if(out, [](const Diagnostic& d) { return d.message.find("ld returned") != std::string::npos; });
  }
  return out;
}

std::string format_errors(const std::vector<Diagnostic>& errors, int max_errors) {
  std::string o;
  const int n = static_cast<int>(errors.size());
  const int shown = std::min(n, std::max(max_errors, 1));
  for (int i = 0; i < shown; ++i) {
    const auto& d = errors[i];
    if (d.line > 0)
      o += d.column > 0 ? fmt::format("{}:{}:{}: error: {}\n", d.file, d.line, d.column, d.message)
                        : fmt::format("{}:{}: error: {}\n", d.file, d.line, d.message);
    else
      o += fmt::format("{}: error: {}\n", d.file, d.message);
    if (!d.source_line.empty()) {
      const std::string gutter = d.line > 0 ? fmt::format("{:>5} | ", d.line) : "      | ";
      o += gutter + d.source_line + "\n";
      if (d.column > 0) {
        std::string pad;
        for (int c = 0; c + 1 < d.column; ++c)
          pad += (c < static_cast<int>(d.source_line.size()) && d.source_line[c] == '\t') ? '\t' : ' ';
        o += "      | " + pad + "^\n";
      }
    }
    if (!d.context.empty()) o += "  (" + d.context + ")\n";
  }
  if (n > shown) o += fmt::format("... and {} more error{}\n", n - shown, n - shown == 1 ? "" : "s");
  return o;
}

std::string classify_reason(const std::vector<Diagnostic>& errors) {
  if (errors.empty()) return "";
  bool missing = false, mismatch = false;
  for (const auto& d : errors) {
    if (d.message.rfind(kMissingForwardMarker, 0) == 0 || is_forward_undeclared(d.message))
      missing = true;
    else if (d.message.rfind(kSignatureMarker, 0) == 0)
      mismatch = true;
    else
      return "";  // some other error: a plain compile error, whatever the checks say
  }
  return missing ? reason::kMissingForward : mismatch ? reason::kSignatureMismatch : "";
}

bool reports_memory_exhaustion(std::string_view output) {
  // Each tool's own words, so a source line that merely quotes "out of memory" does not count.
  static const std::regex re(
      R"re(catastrophic error: out of memory|cc1plus: out of memory|virtual memory exhausted|std::bad_alloc|)re"
      R"re(Memory allocation failure|LLVM ERROR: out of memory|Cannot allocate memory|memory exhausted)re");
  return std::regex_search(output.begin(), output.end(), re);
}

std::string cut_log(std::string_view log, std::size_t limit) {
  if (log.size() <= limit) return std::string(log);
  const std::size_t marker_room = 40;
  const std::size_t keep = limit > marker_room ? limit - marker_room : 0;
  const std::size_t head = keep * 2 / 3, tail = keep - head;
  return fmt::format("{}\n[... cut {} bytes]\n{}", log.substr(0, head), log.size() - head - tail,
                     log.substr(log.size() - tail));
}

}  // namespace kagent
