#include "prompt/template.h"

#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "build_info.h"

namespace kagent::prompt {

namespace {

enum class NodeKind { Text, Var, Section, Inverted };

struct Node {
  NodeKind kind = NodeKind::Text;
  std::string_view text;  // Text: the text; otherwise the variable name
  size_t pos = 0;         // offset in the template, for error messages
  std::vector<Node> children;
};

bool is_blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view what) : t_(text), what_(what) {}

  [[noreturn]] void fail(size_t pos, const std::string& msg) const {
    size_t line = 1;
    for (size_t i = 0; i < pos && i < t_.size(); ++i) line += t_[i] == '\n';
    throw std::runtime_error(fmt::format("prompt template {} line {}: {}", what_, line, msg));
  }

  std::vector<Node> parse() {
    // stack of open sections: the node list being filled, and the section node that owns it
    std::vector<Node> root;
    std::vector<Node*> open;  // section nodes currently open (pointers stay valid: we only push into the top)
    auto current = [&]() -> std::vector<Node>& { return open.empty() ? root : open.back()->children; };

    size_t i = 0, last_tag_end = 0;
    while (i < t_.size()) {
      size_t p = t_.find("{{", i);
      if (p == std::string_view::npos) {
        current().push_back(Node{NodeKind::Text, t_.substr(i), i, {}});
        break;
      }
      size_t close = t_.find("}}", p + 2);
      if (close == std::string_view::npos) fail(p, "\"{{\" without a closing \"}}\"");
      size_t e = close + 2;
      std::string_view body = trim(t_.substr(p + 2, close - p - 2));
      char sigil = body.empty() ? '\0' : body.front();
      bool block_tag = sigil == '#' || sigil == '^' || sigil == '/' || sigil == '!';
      std::string_view name = block_tag ? trim(body.substr(1)) : body;
      if (name.empty() && sigil != '!') fail(p, "empty tag \"{{}}\"");

      size_t text_end = p, next = e;
      if (block_tag) {  // a tag alone on its line takes the whole line with it
        size_t nl_before = p == 0 ? std::string_view::npos : t_.rfind('\n', p - 1);
        size_t ls = nl_before == std::string_view::npos ? 0 : nl_before + 1;
        size_t le = t_.find('\n', e);
        size_t line_end = le == std::string_view::npos ? t_.size() : le;
        if (ls >= last_tag_end && is_blank(t_.substr(ls, p - ls)) && is_blank(t_.substr(e, line_end - e))) {
          text_end = ls;
          next = le == std::string_view::npos ? t_.size() : le + 1;
        }
      }
      if (text_end > i) current().push_back(Node{NodeKind::Text, t_.substr(i, text_end - i), i, {}});
      i = next;
      last_tag_end = next;

      switch (sigil) {
        case '!': break;
        case '#':
        case '^':
          current().push_back(Node{sigil == '#' ? NodeKind::Section : NodeKind::Inverted, name, p, {}});
          open.push_back(&current().back());
          break;
        case '/':
          if (open.empty()) fail(p, fmt::format("\"{{{{/{}}}}}\" closes no section", name));
          if (open.back()->text != name)
            fail(p, fmt::format("\"{{{{/{}}}}}\" closes section \"{}\"", name, open.back()->text));
          open.pop_back();
          break;
        default: current().push_back(Node{NodeKind::Var, name, p, {}});
      }
    }
    if (!open.empty()) fail(open.back()->pos, fmt::format("section \"{}\" is never closed", open.back()->text));
    return root;
  }

 private:
  std::string_view t_, what_;
};

class Renderer {
 public:
  Renderer(const Parser& parser, std::string& out) : parser_(parser), out_(out) {}

  void render(const std::vector<Node>& nodes, std::vector<const nlohmann::json*>& scopes) {
    for (const auto& n : nodes) {
      switch (n.kind) {
        case NodeKind::Text: out_.append(n.text); break;
        case NodeKind::Var: {
          const nlohmann::json* v = lookup(n.text, scopes);
          if (!v) parser_.fail(n.pos, fmt::format("unknown variable \"{}\"", n.text));
          append_value(n, *v);
          break;
        }
        case NodeKind::Section: {
          const nlohmann::json* v = lookup(n.text, scopes);
          if (!v || !truthy(*v)) break;
          if (v->is_array()) {
            for (const auto& e : *v) {
              scopes.push_back(&e);
              render(n.children, scopes);
              scopes.pop_back();
            }
          } else if (v->is_object()) {
            scopes.push_back(v);
            render(n.children, scopes);
            scopes.pop_back();
          } else {
            render(n.children, scopes);
          }
          break;
        }
        case NodeKind::Inverted: {
          const nlohmann::json* v = lookup(n.text, scopes);
          if (!v || !truthy(*v)) render(n.children, scopes);
          break;
        }
      }
    }
  }

 private:
  static bool truthy(const nlohmann::json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_string()) return !v.get_ref<const std::string&>().empty();
    if (v.is_array() || v.is_object()) return !v.empty();
    return true;  // numbers: present means shown, 0 included
  }

  static const nlohmann::json* lookup(std::string_view name, const std::vector<const nlohmann::json*>& scopes) {
    if (name == ".") return scopes.empty() ? nullptr : scopes.back();
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      const nlohmann::json& s = **it;
      if (!s.is_object()) continue;
      auto f = s.find(name);
      if (f != s.end()) return &*f;
    }
    return nullptr;
  }

  void append_value(const Node& n, const nlohmann::json& v) {
    if (v.is_string()) out_ += v.get_ref<const std::string&>();
    else if (v.is_null()) return;
    else if (v.is_number() || v.is_boolean()) out_ += v.dump();
    else parser_.fail(n.pos, fmt::format("variable \"{}\" is a list or object, not text", n.text));
  }

  const Parser& parser_;
  std::string& out_;
};

}  // namespace

std::string render_template(std::string_view text, const nlohmann::json& vars, std::string_view what) {
  Parser parser(text, what);
  if (!vars.is_object() && !vars.is_null())
    throw std::runtime_error(fmt::format("prompt template {}: variables must be a JSON object", what));
  std::vector<Node> nodes = parser.parse();
  std::string out;
  out.reserve(text.size() * 2);
  std::vector<const nlohmann::json*> scopes{&vars};
  Renderer(parser, out).render(nodes, scopes);
  return out;
}

std::filesystem::path default_prompts_dir() { return std::filesystem::path(build::kSourceDir) / "prompts"; }

namespace {
std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

TemplateSet::TemplateSet(std::filesystem::path dir) : dir_(dir.empty() ? default_prompts_dir() : std::move(dir)) {}

const std::string& TemplateSet::text(const std::string& name) const {
  std::lock_guard<std::mutex> lock(cache_mutex());
  auto it = cache_.find(name);
  if (it != cache_.end()) return it->second;
  std::filesystem::path file = dir_ / (name + ".txt");
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw std::runtime_error(fmt::format("prompt template {} not found (prompts folder {}; set it with --prompts DIR)",
                                         file.string(), dir_.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw std::runtime_error(fmt::format("cannot read prompt template {}", file.string()));
  return cache_.emplace(name, ss.str()).first->second;
}

std::string TemplateSet::render(const std::string& name, const nlohmann::json& vars) const {
  return render_template(text(name), vars, name + ".txt");
}

}  // namespace kagent::prompt
