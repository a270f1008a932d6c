#include "compiler/nvcc_split.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>
#include <regex>

#include <fmt/format.h>

#include "common/sha256.h"
#include "compiler/compile_cache.h"
#include "compiler/nvcc_command.h"

namespace fs = std::filesystem;

namespace kagent {

// nvcc quotes with double quotes and never escapes inside them.
std::vector<std::string> dryrun_words(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false, any = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      if (any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
      any = true;
    }
  }
  if (any) out.push_back(cur);
  return out;
}

namespace {

enum class Step { Preprocess, Cudafe, Cicc, Ptxas, Fatbinary, HostCompile, Other };

Step kind_of(const std::vector<std::string>& w) {
  if (w.empty()) return Step::Other;
  const std::string tool = fs::path(w.front()).filename().string();
  if (tool == "cudafe++") return Step::Cudafe;
  if (tool == "cicc") return Step::Cicc;
  if (tool == "ptxas") return Step::Ptxas;
  if (tool == "fatbinary") return Step::Fatbinary;
  if (tool == "nvlink" || tool == "cudafe" || tool == "nvcc") return Step::Other;
  const bool pre = std::find(w.begin(), w.end(), "-E") != w.end();
  const bool compile = std::find(w.begin(), w.end(), "-c") != w.end();
  if (pre && !compile) return Step::Preprocess;
  if (compile && !pre) return Step::HostCompile;
  return Step::Other;
}

std::string value_after(const std::vector<std::string>& w, std::string_view flag) {
  auto it = std::find(w.begin(), w.end(), flag);
  return it != w.end() && std::next(it) != w.end() ? *std::next(it) : std::string();
}


}  // namespace

std::optional<NvccSteps> parse_nvcc_dryrun(std::string_view dryrun) {
  static const std::regex assignment(R"(^([A-Za-z_][A-Za-z0-9_]*)=)");
  NvccSteps s;
  std::vector<std::string> cmds;
  size_t pos = 0;
  while (pos < dryrun.size()) {
    size_t end = dryrun.find('\n', pos);
    if (end == std::string_view::npos) end = dryrun.size();
    std::string line(dryrun.substr(pos, end - pos));
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("#$ ", 0) != 0) continue;
    line = line.substr(3);
    std::smatch m;
    if (std::regex_search(line, m, assignment)) {
      // The value as nvcc holds it (the steps' own command lines are already expanded but
      // for a few such as $CICC_PATH): into the environment, never through the shell.
      std::string value = line.substr(m[0].length());
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"' &&
          value.find('"', 1) == value.size() - 1)
        value = value.substr(1, value.size() - 2);
      s.environment.push_back(m[1].str() + "=" + value);
    } else {
      cmds.push_back(line);
    }
  }
  // host preprocess, cudafe++, (device preprocess, cicc, ptxas) per target, fatbinary, host compile
  if (cmds.size() < 7 || (cmds.size() - 4) % 3 != 0) return std::nullopt;
  std::vector<std::vector<std::string>> w;
  for (const auto& c : cmds) w.push_back(dryrun_words(c));
  const size_t n = cmds.size();
  if (kind_of(w[0]) != Step::Preprocess || kind_of(w[1]) != Step::Cudafe || kind_of(w[n - 2]) != Step::Fatbinary ||
      kind_of(w[n - 1]) != Step::HostCompile)
    return std::nullopt;
  for (size_t i = 2; i + 2 < n - 1; i += 3)
    if (kind_of(w[i]) != Step::Preprocess || kind_of(w[i + 1]) != Step::Cicc || kind_of(w[i + 2]) != Step::Ptxas)
      return std::nullopt;

  // cudafe++ generates the module id that cicc reads; kagent writes it first instead.
  const auto& fe = w[1];
  s.module_id_file = value_after(fe, "--module_id_file_name");
  s.source = value_after(fe, "--orig_src_file_name");
  s.host_source = value_after(fe, "--gen_c_file_name");
  if (s.module_id_file.empty() || s.source.empty() || s.host_source.empty() ||
      std::count(fe.begin(), fe.end(), "--gen_module_id_file") != 1)
    return std::nullopt;
  // The host compile reads exactly cudafe++'s output.
  const auto hc = dryrun_words(cmds[n - 1]);
  if (std::find(hc.begin(), hc.end(), s.host_source.string()) == hc.end()) return std::nullopt;
  for (size_t i = 3; i < n - 2; i += 3)
    if (value_after(w[i], "--module_id_file_name") != s.module_id_file.string()) return std::nullopt;
  std::string cudafe = cmds[1];
  const std::string gen = " --gen_module_id_file ";
  const size_t at = cudafe.find(gen);
  if (at == std::string::npos) return std::nullopt;
  // Built anew rather than replace()d in place: g++ 12 warns (-Wrestrict) on the latter.
  cudafe = cudafe.substr(0, at) + " " + cudafe.substr(at + gen.size());

  s.host = {cmds[0], cudafe};
  s.device.assign(cmds.begin() + 2, cmds.end() - 1);
  s.host_compile = cmds[n - 1];
  return s;
}

std::string module_id_for(const fs::path& source) {
  std::ifstream in(source, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string name = source.filename().string();
  const size_t length = name.size();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return fmt::format("_{}_{}_{}_{}", sha256_hex(text).substr(0, 8), length, name,
                     sha256_hex(source.string()).substr(0, 8));
}

namespace {

// A step's name for CompileStep: the tool it runs ("cicc", "host compile", ...).
std::string step_name(const std::string& command) {
  const auto w = dryrun_words(command);
  switch (kind_of(w)) {
    case Step::Preprocess: return "preprocess";
    case Step::Cudafe: return "cudafe++";
    case Step::Cicc: return "cicc";
    case Step::Ptxas: return "ptxas";
    case Step::Fatbinary: return "fatbinary";
    case Step::HostCompile: return "host compile";
    case Step::Other: break;
  }
  return w.empty() ? std::string("?") : fs::path(w.front()).filename().string();
}

}  // namespace

RunResult run_nvcc_split(const SpawnOptions& so, const CompileLimits& limits, const fs::path& keep_dir,
                         const SplitOptions& options) {
  std::mutex steps_mu;
  auto record = [&](const std::string& name, const RunResult& r) {
    if (!options.steps) return;
    std::lock_guard lock(steps_mu);
    options.steps->push_back({options.label.empty() ? name : options.label + " " + name, r.seconds, r.exit.cpu_seconds});
  };
  auto whole_nvcc = [&] {
    RunResult r = limits.run(so);
    record("nvcc", r);
    return r;
  };
  std::error_code ec;
  fs::create_directories(keep_dir, ec);
  if (ec) return whole_nvcc();
  const TempDir intermediates(keep_dir);  // nvcc's intermediates (tens of MB with torch's headers)
  SpawnOptions dry = so;
  dry.argv.insert(dry.argv.end(), {"-dryrun", "--keep", "--keep-dir", keep_dir.string()});
  const RunResult plan = limits.run(dry);
  // An nvcc that refuses the command says so best itself.
  if (!plan.succeeded()) return whole_nvcc();
  const auto steps = parse_nvcc_dryrun(plan.output);
  if (!steps) return whole_nvcc();
  record("dryrun", plan);
  write_text_file(steps->module_id_file, options.module_id.empty() ? module_id_for(steps->source) : options.module_id);

  const auto t0 = std::chrono::steady_clock::now();
  auto run_step = [&](const std::string& command) {
    if (options.preprocess && kind_of(dryrun_words(command)) == Step::Preprocess) {
      std::vector<CompileStep> ran;
      auto done = options.preprocess(command, steps->environment, ran);
      if (options.steps && !ran.empty()) {
        std::lock_guard lock(steps_mu);
        options.steps->insert(options.steps->end(), ran.begin(), ran.end());
      }
      if (done) {
        record("preprocess", *done);
        return *done;
      }
    }
    SpawnOptions step = so;
    step.argv = {"/bin/sh", "-c", command};
    step.env_set.insert(step.env_set.end(), steps->environment.begin(), steps->environment.end());
    RunResult r = limits.run(step);
    record(step_name(command), r);
    return r;
  };
  auto run_chain = [&](const std::vector<std::string>& cmds) {
    std::vector<RunResult> out;
    for (const auto& c : cmds) {
      out.push_back(run_step(c));
      if (!out.back().succeeded()) break;
    }
    return out;
  };
  auto device_future = std::async(std::launch::async, run_chain, std::cref(steps->device));
  std::vector<RunResult> results = run_chain(steps->host);
  const bool host_ok = results.size() == steps->host.size() && results.back().succeeded();
  std::vector<RunResult> device = device_future.get();
  const bool device_ok = device.size() == steps->device.size() && device.back().succeeded();
  long peak_kb = 0;
  for (const auto& r : device) peak_kb = std::max(peak_kb, r.exit.peak_rss_kb);
  // nvcc stops at the first failed step, so a failed host front end hides the device steps.
  if (host_ok) results.insert(results.end(), device.begin(), device.end());
  if (host_ok && device_ok) {
    HostCompile hc{steps->host_source, steps->host_compile, steps->environment};
    if (options.before_host_compile) options.before_host_compile(hc);
    results.push_back(run_step(hc.command));
  }

  RunResult out;
  out.exit.exited = true;
  out.exit.code = 0;
  for (const auto& r : results) {
    out.output += r.output;
    peak_kb = std::max(peak_kb, r.exit.peak_rss_kb);
    out.exit.cpu_seconds += r.exit.cpu_seconds;
    if (!r.succeeded()) {
      out.exit = r.exit;
      out.timed_out = r.timed_out;
      break;
    }
  }
  // A device step that ran out of time is the compile's timeout even when the host one failed first.
  for (const auto& r : device) out.timed_out = out.timed_out || r.timed_out;
  out.exit.peak_rss_kb = peak_kb;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() + plan.seconds;
  return out;
}

std::optional<std::string> host_compile_to_pch(const std::string& command, const fs::path& source,
                                               const fs::path& header, const fs::path& gch) {
  auto w = dryrun_words(command);
  if (kind_of(w) != Step::HostCompile) return std::nullopt;
  bool src = false, out = false, lang = false;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == source.string()) {
      w[i] = header.string();
      src = true;
    } else if (w[i] == "-o" && i + 1 < w.size()) {
      w[++i] = gch.string();
      out = true;
    } else if (w[i] == "-x" && i + 1 < w.size() && w[i + 1] == "c++") {
      w[++i] = "c++-header";
      lang = true;
    }
  }
  if (!src || !out || !lang) return std::nullopt;
  return shell_join(w);
}

}  // namespace kagent
