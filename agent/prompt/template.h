// A tiny text-template renderer for the prompts in prompts/*.txt (the wording lives
// there, so users change it without rebuilding).
//
// Syntax (a small Mustache subset):
//   {{name}}              the variable's value (string as is; number; bool as true/false; null as "")
//   {{#name}}...{{/name}} rendered when `name` is present and truthy: a non-empty string, true,
//                         any number, a non-empty array or object. Over an array it renders once
//                         per element; inside, an object element's keys are variables and {{.}}
//                         is the element itself. Over an object its keys come into scope.
//   {{^name}}...{{/name}} rendered when `name` is absent or falsy.
//   {{! comment }}        dropped (notes for whoever edits the template).
// A line holding only a section, inverted, closing or comment tag (plus whitespace) is removed
// whole, so these tags do not leave blank lines. Substituted values are never re-scanned, so a
// value that contains "{{" is safe. A {{name}} that no scope defines is an error
// (std::runtime_error naming the variable and the template); so are unbalanced sections and
// an unclosed "{{".
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kagent::prompt {

// Renders `text` with `vars` (a JSON object). `what` names the template in error messages.
std::string render_template(std::string_view text, const nlohmann::json& vars, std::string_view what = "template");

// The repository's prompts/ folder (build_info.h kSourceDir + "/prompts").
std::filesystem::path default_prompts_dir();

// Templates loaded from a folder, NAME -> DIR/NAME.txt, read on first use and kept.
class TemplateSet {
 public:
  // An empty `dir` means default_prompts_dir() (what `--prompts DIR` overrides).
  explicit TemplateSet(std::filesystem::path dir = {});

  const std::filesystem::path& dir() const { return dir_; }
  // The template's text; std::runtime_error when the file is missing or unreadable.
  const std::string& text(const std::string& name) const;
  std::string render(const std::string& name, const nlohmann::json& vars) const;

 private:
  std::filesystem::path dir_;
  mutable std::map<std::string, std::string> cache_;
};

}  // namespace kagent::prompt
