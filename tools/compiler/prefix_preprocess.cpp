#include "compiler/prefix_preprocess.h"

#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sys/stat.h>

#include <fmt/format.h>

#include "common/files.h"
#include "common/sha256.h"
#include "compiler/cached_artifact.h"
#include "compiler/host_pch.h"
#include "compiler/nvcc_command.h"
#include "compiler/nvcc_split.h"

namespace fs = std::filesystem;

namespace kagent {

namespace {

constexpr std::string_view kVersion = "kagent-pp-prefix-1";
// The extension's name while the prefix is built: found in its output or macros, the prefix
// depends on the name and cannot serve other answers.
constexpr std::string_view kPlaceholderName = "kagent_prefix_extension_name";
constexpr std::string_view kExtensionName = "TORCH_EXTENSION_NAME=";
constexpr std::string_view kMacroFile1 = "kagent_prefix_macros_1.h";
constexpr std::string_view kMacroFile2 = "kagent_prefix_macros_2.h";

// The preprocessor's words and where the parts the scheme changes are.
struct Command {
  std::vector<std::string> words;
  size_t out = 0, source = 0, include = 0, name = 0;
  bool has_name = false;
};

std::optional<Command> parse_command(const std::string& line, const std::string& source_name) {
  Command c;
  c.words = dryrun_words(line);
  int e = 0, outs = 0, sources = 0, includes = 0;
  for (size_t i = 0; i < c.words.size(); ++i) {
    const std::string& w = c.words[i];
    if (w == "-E") ++e;
    if (w == "-dM" || w == "-dD" || w == "-dN" || w == "-dI" || w == "-M" || w == "-MM" || w == "-MD" || w == "-MMD" ||
        w == "-P" || w == "-C" || w == "-CC" || w == "-imacros")
      return std::nullopt;
    if ((w == "-o" || w == "-include") && i + 1 < c.words.size()) {
      if (w == "-o") {
        c.out = ++i;
        ++outs;
      } else if (c.words[i + 1] == "cuda_runtime.h") {
        c.include = ++i;
        ++includes;
      } else {
        return std::nullopt;  // an -include the prefix does not know
      }
      continue;
    }
    if (w == source_name) {
      c.source = i;
      ++sources;
    }
    if (w.rfind(kExtensionName, 0) == 0 || w.rfind("-D" + std::string(kExtensionName), 0) == 0) {
      c.name = i;
      c.has_name = true;
    }
  }
  if (e != 1 || outs != 1 || sources != 1 || includes != 1) return std::nullopt;
  return c;
}

std::vector<std::string> with_name(const Command& c, std::string_view name) {
  std::vector<std::string> w = c.words;
  if (c.has_name) w[c.name] = (w[c.name].rfind("-D", 0) == 0 ? "-D" : "") + std::string(kExtensionName) + std::string(name);
  return w;
}

std::string key_of(const PrefixPreprocessRequest& r, const Command& c) {
  auto w = with_name(c, kPlaceholderName);
  w[c.out] = "<out>";
  Sha256 h;
  h.update(kVersion).update(kCudaImplicitHeaders).update(shell_join(w)).update(r.toolchain);
  for (const auto& e : r.environment) h.update(e);
  return h.hex_digest();
}

// `# <line> "<file>" <flags>`, GCC's line marker. Paths with escapes are not taken apart.
struct Marker {
  long line = 0;
  std::string file;
  std::vector<int> flags;
  bool enters() const { return !flags.empty() && flags.front() == 1; }
  bool returns() const { return !flags.empty() && flags.front() == 2; }
  std::string system_flags() const {
    std::string s;
    for (int f : flags)
      if (f == 3 || f == 4) s += fmt::format(" {}", f);
    return s;
  }
};

std::optional<Marker> marker_of(std::string_view line) {
  if (line.size() < 5 || line[0] != '#' || line[1] != ' ' || !std::isdigit(static_cast<unsigned char>(line[2])))
    return std::nullopt;
  Marker m;
  size_t i = 2;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) m.line = m.line * 10 + (line[i++] - '0');
  if (i + 1 >= line.size() || line[i] != ' ' || line[i + 1] != '"') return std::nullopt;
  const size_t close = line.find('"', i + 2);
  if (close == std::string_view::npos) return std::nullopt;
  m.file = std::string(line.substr(i + 2, close - i - 2));
  for (size_t j = close + 1; j < line.size(); ++j) {
    if (line[j] == ' ') continue;
    if (!std::isdigit(static_cast<unsigned char>(line[j]))) return std::nullopt;
    m.flags.push_back(line[j] - '0');
  }
  return m;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

std::string canonical_of(const std::string& path, const fs::path& cwd) {
  std::error_code ec;
  fs::path p(path);
  if (p.is_relative()) p = cwd / p;
  const fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

// A #pragma once file's identity as GCC checks it against another: size, mtime and contents.
struct OnceFile {
  long long size = 0, mtime = 0;
  std::string path;  // canonical
};

std::optional<OnceFile> once_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return OnceFile{static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtime), path};
}

// What a built prefix holds, read from its cache entry.
struct Prefix {
  fs::path dir;
  std::set<std::string> files;   // canonical paths of every file the prefix entered
  std::vector<OnceFile> once;    // those GCC will not enter again (#pragma once)
  std::set<std::string> once_paths;
};

std::optional<Prefix> read_prefix(const fs::path& output) {
  Prefix p;
  p.dir = output.parent_path();
  std::ifstream in(p.dir / "files.txt");
  if (!in) return std::nullopt;
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3) continue;
    const std::string path = line.substr(2);
    p.files.insert(path);
    if (line[0] == 'o') {
      if (auto id = once_identity(path)) {
        p.once.push_back(*id);
        p.once_paths.insert(path);
      }
    }
  }
  return p;
}

// A preprocessor line as nvcc would run it: through the shell, with nvcc's variables, in `cwd`.
SpawnOptions preprocessor_spawn(const PrefixPreprocessRequest& r, const std::vector<std::string>& words,
                                const fs::path& cwd) {
  SpawnOptions so = r.spawn;
  so.argv = {"/bin/sh", "-c", shell_join(words)};
  so.cwd = cwd.string();
  so.env_set.insert(so.env_set.end(), r.environment.begin(), r.environment.end());
  return so;
}

// Runs one preprocessor line of the build; output (stdout and stderr) into `printed`.
bool run_build_step(const PrefixPreprocessRequest& r, const std::vector<std::string>& words, const fs::path& cwd,
                    const std::string& label, BuiltArtifact& b, std::string* printed = nullptr) {
  const RunResult run = r.prefix_limits.run(preprocessor_spawn(r, words, cwd));
  if (r.steps) r.steps->push_back(step_of("pch cuda.cu preprocess prefix " + label, run));
  if (!r.prefix_limits.hit(run).empty()) b.limit = true;
  if (printed) *printed = run.output;
  if (!run.succeeded()) {
    b.why = fmt::format("the preprocessor's prefix ({}) did not build:\n{}", label, run.output);
    return false;
  }
  return true;
}

std::vector<std::string> inserted_after_e(std::vector<std::string> w, const std::vector<std::string>& more) {
  auto it = std::find(w.begin(), w.end(), "-E");
  w.insert(std::next(it), more.begin(), more.end());
  return w;
}

std::string macro_name(std::string_view directive_rest) {
  size_t n = 0;
  while (n < directive_rest.size() && (std::isalnum(static_cast<unsigned char>(directive_rest[n])) || directive_rest[n] == '_'))
    ++n;
  return std::string(directive_rest.substr(0, n));
}

BuiltArtifact build_prefix(const PrefixPreprocessRequest& r, const Command& c, const fs::path& dir) {
  BuiltArtifact b{dir / "prefix.ii", {}, false};
  const auto named = with_name(c, kPlaceholderName);

  // 1. The prefix's own output, exactly as an answer's run would print it.
  fs::create_directories(dir / "p");
  write_text_file(dir / "p" / "cuda.cu", kCudaImplicitHeaders);
  auto w = named;
  w[c.out] = b.path.string();
  std::string printed;
  if (!run_build_step(r, w, dir / "p", "output", b, &printed)) return b;
  if (!printed.empty()) {
    b.why = "the prefix's preprocessor run printed something:\n" + printed;
    return b;
  }
  // 2. Its macros with where each was defined (-dD), and __COUNTER__ where it leaves it.
  fs::create_directories(dir / "d");
  write_text_file(dir / "d" / "cuda.cu", std::string(kCudaImplicitHeaders) + "kagent_counter __COUNTER__\n");
  w = named;
  w[c.out] = (dir / "d" / "out.ii").string();
  w = inserted_after_e(w, {"-dD"});
  if (!run_build_step(r, w, dir / "d", "macros", b)) return b;
  // 3. The macros an answer's run starts with (no file, no -include) and the include search list.
  fs::create_directories(dir / "z");
  write_text_file(dir / "z" / "empty.cu", "");
  w = named;
  w[c.source] = "empty.cu";
  w[c.out] = (dir / "z" / "macros.h").string();
  w.erase(w.begin() + static_cast<long>(c.include) - 1, w.begin() + static_cast<long>(c.include) + 1);
  w = inserted_after_e(w, {"-dM", "-v"});
  std::string search;
  if (!run_build_step(r, w, dir / "z", "start", b, &search)) return b;

  static const std::regex define(R"(^#define ([A-Za-z_][A-Za-z0-9_]*))");
  std::map<std::string, std::string> start;  // name -> its #define line
  const std::string start_text = read_file(dir / "z" / "macros.h");
  for (auto line : lines_of(start_text))
    if (line.rfind("#define ", 0) == 0) start[macro_name(line.substr(8))] = std::string(line);
  struct Def {
    std::string line;
    int system = 0;  // 0 user, 1 system header, 2 system header in extern "C" (GCC's 3 and 3 4)
  };
  std::map<std::string, std::optional<Def>> changes;  // nullopt: #undef
  for (const auto& [name, line] : start) changes[name] = Def{line, 0};
  const std::string defined = read_file(dir / "d" / "out.ii");
  int system = 0;
  long counter = -1;
  for (auto line : lines_of(defined)) {
    if (auto m = marker_of(line)) {
      const std::string s = m->system_flags();
      system = s == " 3 4" ? 2 : s == " 3" ? 1 : 0;
      continue;
    }
    if (line.rfind("#define ", 0) == 0) {
      changes[macro_name(line.substr(8))] = Def{std::string(line), system};
    } else if (line.rfind("#undef ", 0) == 0) {
      changes[macro_name(line.substr(7))] = std::nullopt;
    } else if (line.rfind("kagent_counter ", 0) == 0) {
      counter = std::strtol(std::string(line.substr(15)).c_str(), nullptr, 10);
    }
  }
  if (counter < 0) {
    b.why = "the prefix's __COUNTER__ was not found";
    return b;
  }
  std::string files[3];
  files[1] = "#pragma GCC system_header\n";
  for (const auto& [name, def] : changes) {
    const auto s = start.find(name);
    if (!def) {
      if (s != start.end()) files[0] += "#undef " + name + "\n";
      continue;
    }
    if (s != start.end() && s->second == def->line) continue;
    if (s != start.end()) files[0] += "#undef " + name + "\n";
    files[def->system] += def->line + "\n";
  }
  for (long i = 0; i < counter; ++i) files[0] += "#if __COUNTER__\n#endif\n";
  const std::string out = read_file(b.path);
  static const std::regex stateful(R"((^|\n)[ \t]*#[ \t]*pragma[ \t]+(push_macro|pop_macro|GCC[ \t]+poison))");
  for (const auto& f : {files[0], files[1], files[2], out}) {
    if (f.find(kPlaceholderName) != std::string::npos) {
      b.why = "the prefix depends on the extension's name";
      return b;
    }
  }
  if (std::regex_search(out, stateful)) {
    b.why = "the prefix keeps preprocessor state besides macros (push_macro or poison)";
    return b;
  }
  const std::string names[3] = {"kagent_prefix_macros_0.h", std::string(kMacroFile1), std::string(kMacroFile2)};
  for (int i = 0; i < 3; ++i) {
    fs::create_directories(dir / fmt::format("inc{}", i));
    write_text_file(dir / fmt::format("inc{}", i) / names[i], files[i]);
  }

  // 4. Its files: every one entered, and the #pragma once ones shadowed by empty files where an
  // #include <...> of theirs would find them first.
  std::vector<fs::path> dirs;
  const std::string begin = "#include <...> search starts here:\n";
  const size_t at = search.find(begin), end = search.find("End of search list.");
  if (at == std::string::npos || end == std::string::npos || end < at) {
    b.why = "the preprocessor did not print its include search list";
    return b;
  }
  for (auto line : lines_of(std::string_view(search).substr(at + begin.size(), end - at - begin.size()))) {
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string_view::npos) dirs.push_back(fs::path(std::string(line.substr(first))).lexically_normal());
  }
  std::set<std::string> printed_paths;
  for (auto line : lines_of(out))
    if (auto m = marker_of(line); m && m->enters()) printed_paths.insert(m->file);
  // Which of them GCC will not enter again: asked of GCC itself, since torch's headers put their
  // #pragma once under an #if. Each file with the pragma is included once more after the prefix;
  // one it skips (no line marker into it before the next probe line) is once-only for good.
  std::vector<std::string> candidates;
  static const std::regex once_line(R"((^|\n)[ \t]*#[ \t]*pragma[ \t]+once\b)");
  for (const auto& printed_path : printed_paths) {
    if (printed_path.find('\\') != std::string::npos || printed_path.find('"') != std::string::npos) {
      b.why = "a file name with an escape in the prefix's output: " + printed_path;
      return b;
    }
    if (printed_path.empty() || printed_path.front() != '/') continue;  // cuda.cu, <built-in>
    if (std::regex_search(read_file_or_empty(printed_path), once_line)) candidates.push_back(printed_path);
  }
  fs::create_directories(dir / "q");
  std::string probe(kCudaImplicitHeaders);
  for (size_t i = 0; i < candidates.size(); ++i) probe += fmt::format("kagent_probe_{}\n#include \"{}\"\n", i, candidates[i]);
  write_text_file(dir / "q" / "cuda.cu", probe);
  w = named;
  w[c.out] = (dir / "q" / "out.ii").string();
  if (!run_build_step(r, w, dir / "q", "once", b)) return b;
  std::vector<bool> entered_again(candidates.size(), false);
  {
    const std::string probed = read_file(dir / "q" / "out.ii");
    const std::string tag = "kagent_probe_";
    long current = -1;
    for (auto line : lines_of(probed)) {
      if (line.rfind(tag, 0) == 0) {
        current = std::strtol(std::string(line.substr(tag.size())).c_str(), nullptr, 10);
      } else if (current >= 0 && static_cast<size_t>(current) < candidates.size()) {
        if (auto m = marker_of(line); m && m->enters()) entered_again[static_cast<size_t>(current)] = true;
      }
    }
  }
  std::set<std::string> once;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (!entered_again[i]) once.insert(candidates[i]);

  // The once-only files shadowed by empty files where an #include <...> of theirs finds them first.
  std::string list;
  const fs::path shadow = dir / "shadow";
  fs::create_directories(shadow);
  for (const auto& printed_path : printed_paths) {
    if (printed_path.empty() || printed_path.front() != '/') continue;
    const bool is_once = once.count(printed_path) > 0;
    list += (is_once ? "o " : "f ") + canonical_of(printed_path, dir) + "\n";
    if (!is_once) continue;
    const fs::path normal = fs::path(printed_path).lexically_normal();
    for (const auto& d : dirs) {
      const fs::path rel = normal.lexically_relative(d);
      if (rel.empty() || *rel.begin() == "..") continue;
      // Shadowed only where <rel> resolves to this very file.
      const fs::path* first = nullptr;
      for (const auto& e : dirs)
        if (fs::exists(e / rel)) {
          first = &e;
          break;
        }
      std::error_code ec;
      if (first && *first == d && fs::equivalent(d / rel, normal, ec)) {
        fs::create_directories((shadow / rel).parent_path());
        write_text_file(shadow / rel, "");
      }
    }
  }
  write_text_file(dir / "files.txt", list);
  fs::remove_all(dir / "d");  // the -dD output and the probe's are as large as the prefix's
  fs::remove_all(dir / "q");
  return b;
}

// The prefix's cache entry for `key`, built when missing (cached_artifact.h).
std::optional<fs::path> ensure_prefix(const PrefixPreprocessRequest& r, const Command& c, const std::string& key) {
  return cached_artifact(*r.cache, key, [&](const fs::path& dir) { return build_prefix(r, c, dir); });
}

// The rest's output with every section GCC would not have entered taken out: the empty files
// of the shadow folder, prefix files entered again that expand to nothing (an include guard),
// and files GCC takes for a #pragma once file of the prefix. A section becomes a line marker
// to where the #include was, so every line keeps its number. nullopt: cannot vouch for it.
std::optional<std::string> without_skipped_files(std::string_view body, const Prefix& p, const fs::path& cwd) {
  const std::string shadow = (p.dir / "shadow").string() + "/";
  struct Open {
    size_t start;
    bool skippable;   // the section is dropped if nothing in it printed
    bool must_empty;  // and it must be empty
    bool content = false;
  };
  std::vector<Open> stack;
  std::vector<std::string_view> out;
  std::deque<std::string> made;  // the markers written in place of sections (stable for `out`'s views)
  std::map<std::string, bool> same_as_once;  // new #pragma once files, checked once
  for (auto line : lines_of(body)) {
    const auto m = marker_of(line);
    if (!m) {
      if (!blank(line) && !stack.empty()) stack.back().content = true;
      out.push_back(line);
      continue;
    }
    if (m->enters()) {
      if (m->file.find('\\') != std::string::npos) return std::nullopt;
      if (m->file.rfind(shadow, 0) == 0) {
        stack.push_back({out.size(), true, true});
      } else {
        const std::string canonical = canonical_of(m->file, cwd);
        if (p.once_paths.count(canonical)) return std::nullopt;  // entered again by another path
        const bool in_prefix = p.files.count(canonical) > 0;
        bool same = false;
        if (!in_prefix) {
          auto it = same_as_once.find(canonical);
          if (it == same_as_once.end()) {
            const auto id = once_identity(canonical);
            const std::string text = id ? read_file_or_empty(canonical) : std::string();
            bool s = false;
            if (id)
              for (const auto& o : p.once)
                if (o.size == id->size && o.mtime == id->mtime && read_file_or_empty(o.path) == text) s = true;
            it = same_as_once.emplace(canonical, s).first;
          }
          same = it->second;
        }
        stack.push_back({out.size(), in_prefix || same, same});
      }
      out.push_back(line);
      continue;
    }
    if (m->returns() && !stack.empty()) {
      const Open o = stack.back();
      stack.pop_back();
      if (o.skippable && !o.content) {
        out.resize(o.start);
        made.push_back(fmt::format("# {} \"{}\"{}", m->line, m->file, m->system_flags()));
        out.push_back(made.back());
        continue;
      }
      if (o.must_empty) return std::nullopt;
      if (o.content && !stack.empty()) stack.back().content = true;
    }
    out.push_back(line);
  }
  if (!stack.empty()) return std::nullopt;
  std::string text;
  for (auto l : out) {
    if (l.find(shadow) != std::string_view::npos) return std::nullopt;  // a shadow file reached otherwise
    text.append(l).push_back('\n');
  }
  return text;
}

}  // namespace

bool ensure_preprocess_prefix(const PrefixPreprocessRequest& r) {
  const auto c = parse_command(r.command, r.source_name);
  return c && r.cache && ensure_prefix(r, *c, key_of(r, *c)).has_value();
}

std::optional<RunResult> preprocess_after_prefix(const PrefixPreprocessRequest& r) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!r.cache || r.source_text.rfind(kCudaImplicitHeaders, 0) != 0) return std::nullopt;
  const auto c = parse_command(r.command, r.source_name);
  if (!c) return std::nullopt;
  const auto output = ensure_prefix(r, *c, key_of(r, *c));
  if (!output) return std::nullopt;
  const auto prefix = read_prefix(*output);
  if (!prefix) return std::nullopt;

  // The rest, in a folder of its own under the same file name (its lines keep their numbers).
  const fs::path out = c->words[c->out];
  const fs::path dir = out.parent_path() / ("kagent_rest_" + out.filename().string());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return std::nullopt;
  write_text_file(dir / r.source_name, "\n\n\n" + r.source_text.substr(kCudaImplicitHeaders.size()));
  std::vector<std::string> w = c->words;
  w[c->out] = (dir / "rest.ii").string();
  const fs::path inc = prefix->dir;
  w[c->include] = (inc / "inc0" / "kagent_prefix_macros_0.h").string();
  w.insert(w.begin() + static_cast<long>(c->include) + 1,
           {"-include", std::string(kMacroFile1), "-include", std::string(kMacroFile2)});
  w = inserted_after_e(w, {"-I", (inc / "shadow").string(), "-I", (inc / "inc1").string(), "-isystem",
                           (inc / "inc2").string()});
  RunResult run = r.limits.run(preprocessor_spawn(r, w, dir));
  // A warning or an error is the whole run's to print, in its own words and places.
  if (!run.succeeded() || !run.output.empty()) return std::nullopt;
  const std::string rest = read_file_or_empty(dir / "rest.ii");
  const std::string head = "\n# 1 \"" + r.source_name + "\"\n";
  const size_t at = rest.find(head);
  if (at == std::string::npos) return std::nullopt;
  const auto body = without_skipped_files(std::string_view(rest).substr(at + head.size()), *prefix, dir);
  if (!body) return std::nullopt;
  fs::copy_file(*output, out, fs::copy_options::overwrite_existing, ec);
  if (ec) return std::nullopt;
  {
    std::ofstream f(out, std::ios::binary | std::ios::app);
    f << "# 1 \"" << r.source_name << "\"\n" << *body;
    if (!f) return std::nullopt;
  }
  fs::remove_all(dir, ec);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace kagent
