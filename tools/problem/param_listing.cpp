#include "problem/param_listing.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace kagent {

namespace {

bool numeric(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = s.find('.', start)) != std::string::npos; start = dot + 1) parts.push_back(s.substr(start, dot - start));
  parts.push_back(s.substr(start));
  return parts;
}

std::string join(const std::vector<std::string>& parts, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to; ++i) s += (i > from ? "." : "") + parts[i];
  return s;
}

// "weight [64, 3, 7, 7]", "num_batches_tracked int64 []"
std::string entry_text(const TensorArg& a, const std::string& leaf, const std::string& dtype) {
  std::string s = leaf;
  if (a.kind != ArgKind::Tensor) return s + " " + to_string(a.kind);
  if (a.dtype != dtype) s += " " + a.dtype;
  return s + fmt::format(" [{}]", fmt::join(a.shape, ", "));
}

// One module's entries: "weight [64], bias [64]; buffers running_mean [64], ..."
struct Module {
  std::string path;  // "" for the model's own entries
  std::string text;
};

std::vector<Module> modules_of(const std::vector<TensorArg>& params, const std::string& dtype) {
  std::vector<Module> out;
  std::vector<std::string> own, buffers;
  std::optional<std::string> current;
  auto flush = [&] {
    if (!current) return;
    std::string text = fmt::format("{}", fmt::join(own, ", "));
    if (!buffers.empty()) text += fmt::format("{}buffers {}", own.empty() ? "" : "; ", fmt::join(buffers, ", "));
    out.push_back({*current, text});
    own.clear();
    buffers.clear();
  };
  for (const auto& a : params) {
    const auto dot = a.name.rfind('.');
    const std::string path = dot == std::string::npos ? "" : a.name.substr(0, dot);
    const std::string leaf = dot == std::string::npos ? a.name : a.name.substr(dot + 1);
    if (!current || *current != path) {
      flush();
      current = path;
    }
    (a.is_buffer ? buffers : own).push_back(entry_text(a, leaf, dtype));
  }
  flush();
  return out;
}

// Consecutive modules inside one numbered block ("layer3.5" of "layer3.5.conv1"): the block is
// the path up to its last number that has more after it, or the whole path when it ends in one.
struct Unit {
  std::string block;            // "layer3.5"; the module path itself when there is no number
  std::optional<std::string> stem;  // "layer3." when the block ends in a number
  long index = 0;
  std::vector<std::pair<std::string, std::string>> items;  // (path inside the block, text)

  std::string body() const {
    std::string s;
    for (const auto& [rel, text] : items) s += (s.empty() ? "" : " | ") + (rel.empty() ? text : "`" + rel + "`: " + text);
    return s;
  }
};

std::vector<Unit> units_of(const std::vector<Module>& modules) {
  std::vector<Unit> out;
  for (const auto& m : modules) {
    const auto parts = split_dots(m.path);
    size_t end = 0;  // the block is parts[0, end)
    for (size_t i = 0; i + 1 < parts.size(); ++i)
      if (numeric(parts[i])) end = i + 1;
    if (end == 0 && !m.path.empty() && numeric(parts.back())) end = parts.size();
    const std::string block = end ? join(parts, 0, end) : m.path;
    const std::string rel = end ? join(parts, end, parts.size()) : "";
    if (end && !out.empty() && out.back().block == block) {
      out.back().items.emplace_back(rel, m.text);
      continue;
    }
    Unit u;
    u.block = block;
    if (end) {
      u.stem = join(parts, 0, end - 1) + (end > 1 ? "." : "");
      u.index = std::stol(parts[end - 1]);
    }
    u.items.emplace_back(rel, m.text);
    out.push_back(std::move(u));
  }
  return out;
}

// "{1..22}" for a contiguous run of indices, "{0, 2, 5}" otherwise.
std::string index_set(const std::vector<long>& idx) {
  bool contiguous = true;
  for (size_t i = 1; i < idx.size(); ++i) contiguous = contiguous && idx[i] == idx[i - 1] + 1;
  if (contiguous) return fmt::format("{{{}..{}}}", idx.front(), idx.back());
  return fmt::format("{{{}}}", fmt::join(idx, ", "));
}

// A body as text around the sizes inside [...]: blocks whose sizes grow with their index (a
// DenseNet layer's input channels) fold into one line with sizes like "64+32i".
struct Skeleton {
  std::vector<std::string> text;  // one more than sizes
  std::vector<long> sizes;
};

Skeleton skeleton_of(const std::string& body) {
  Skeleton k;
  k.text.emplace_back();
  bool in_shape = false;
  for (size_t i = 0; i < body.size();) {
    const char c = body[i];
    if (in_shape && std::isdigit(static_cast<unsigned char>(c))) {
      size_t end = i;
      while (end < body.size() && std::isdigit(static_cast<unsigned char>(body[end]))) ++end;
      k.sizes.push_back(std::stol(body.substr(i, end - i)));
      k.text.emplace_back();
      i = end;
      continue;
    }
    if (c == '[') in_shape = true;
    if (c == ']') in_shape = false;
    k.text.back() += c;
    ++i;
  }
  return k;
}

// "64+32i", "32i", "i", "96-32i", or the number when it does not change.
std::string linear_text(long at_zero, long per_index) {
  if (per_index == 0) return std::to_string(at_zero);
  const std::string term = (std::abs(per_index) == 1 ? "" : std::to_string(std::abs(per_index))) + "i";
  if (at_zero == 0) return (per_index < 0 ? "-" : "") + term;
  return std::to_string(at_zero) + (per_index < 0 ? "-" : "+") + term;
}

// How many units from `first` fold into one line whose sizes are linear in the block index
// (at least three, evenly spaced indices, the same text), and that line; 0 when none.
std::pair<size_t, std::string> linear_run(const std::vector<Unit>& units, size_t first) {
  const Unit& u = units[first];
  if (!u.stem || first + 2 >= units.size()) return {0, ""};
  const Skeleton k0 = skeleton_of(u.body());
  const long step = units[first + 1].index - u.index;
  if (step <= 0) return {0, ""};
  std::vector<long> delta;  // per slot, change from one unit to the next
  size_t n = 1;
  for (size_t j = first + 1; j < units.size(); ++j, ++n) {
    const Unit& v = units[j];
    if (v.stem != u.stem || v.index != u.index + static_cast<long>(n) * step) break;
    const Skeleton k = skeleton_of(v.body());
    if (k.text != k0.text) break;
    if (delta.empty())
      for (size_t s = 0; s < k.sizes.size(); ++s) delta.push_back(k.sizes[s] - k0.sizes[s]);
    bool linear = true;
    for (size_t s = 0; s < k.sizes.size() && linear; ++s)
      linear = k.sizes[s] == k0.sizes[s] + static_cast<long>(n) * delta[s] && delta[s] % step == 0;
    if (!linear) break;
  }
  if (n < 3) return {0, ""};
  std::string body = k0.text[0];
  for (size_t s = 0; s < k0.sizes.size(); ++s) {
    const long per_index = delta[s] / step;
    body += linear_text(k0.sizes[s] - per_index * u.index, per_index) + k0.text[s + 1];
  }
  const long last = u.index + static_cast<long>(n - 1) * step;
  return {n, fmt::format("`{}i` for i = {}..{}{} ({} alike), each: {}", *u.stem, u.index, last,
                         step == 1 ? "" : fmt::format(" step {}", step), n, body)};
}

}  // namespace

std::string common_dtype(const std::vector<TensorArg>& params) {
  std::map<std::string, int> counts;
  for (const auto& a : params) ++counts[a.dtype];
  std::string best;
  int n = 0;
  for (const auto& [dtype, c] : counts)
    if (c > n) best = dtype, n = c;
  return best;
}

std::vector<std::string> param_listing(const std::vector<TensorArg>& params) {
  const auto units = units_of(modules_of(params, common_dtype(params)));
  std::vector<std::string> lines;
  for (size_t i = 0; i < units.size();) {
    const Unit& u = units[i];
    size_t j = i + 1;
    std::vector<long> indices{u.index};
    while (u.stem && j < units.size() && units[j].stem == u.stem && units[j].body() == u.body())
      indices.push_back(units[j++].index);
    if (j - i > 1) {
      lines.push_back(fmt::format("`{}{}` ({} alike), each: {}", *u.stem, index_set(indices), j - i, u.body()));
    } else if (auto [n, line] = linear_run(units, i); n > 0) {
      lines.push_back(line);
      j = i + n;
    } else {
      for (const auto& [rel, text] : u.items) {
        std::string path = rel.empty() ? u.block : u.block + "." + rel;
        lines.push_back(fmt::format("`{}`: {}", path.empty() ? "(model)" : path, text));
      }
    }
    i = j;
  }
  return lines;
}

}  // namespace kagent
