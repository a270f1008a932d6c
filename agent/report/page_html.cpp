#include "report/page_html.h"

#include <stdexcept>
#include <string_view>

#include "report_assets.h"

namespace kagent::report {

namespace {

void append_escaped_html(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
}

// JSON inside <script type="application/json">: a "<" only occurs inside JSON strings, and
// written as \u003c it can never close the script element or open a comment.
void append_script_json(std::string& out, const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out.reserve(out.size() + text.size() + text.size() / 50);
  size_t from = 0;
  for (size_t lt = text.find('<'); lt != std::string::npos; lt = text.find('<', from)) {
    out.append(text, from, lt - from);
    out += "\\u003c";
    from = lt + 1;
  }
  out.append(text, from, std::string::npos);
}

// The license goes into a script comment: it must not end the comment early.
std::string license_comment(std::string_view license) {
  std::string text(license);
  for (size_t p = text.find("*/"); p != std::string::npos; p = text.find("*/", p)) text.replace(p, 2, "* /");
  return "/* jsdiff 5.0.0 (vendored, unchanged). Its license:\n" + text + "*/\n";
}

}  // namespace

std::string render_page(const nlohmann::json& data, const std::string& title) {
  const std::string_view tpl = assets::kPageHtml;
  std::string out;
  size_t from = 0;
  // The template's placeholders are {{NAME}}; each is replaced by its content, in order.
  for (size_t open = tpl.find("{{"); open != std::string_view::npos; open = tpl.find("{{", from)) {
    const size_t close = tpl.find("}}", open);
    if (close == std::string_view::npos) throw std::logic_error("page template: unclosed {{");
    out.append(tpl.substr(from, open - from));
    const std::string_view name = tpl.substr(open + 2, close - open - 2);
    if (name == "TITLE") append_escaped_html(out, title);
    else if (name == "STYLE") out.append(assets::kStyleCss);
    else if (name == "JSDIFF") out.append(license_comment(assets::kJsdiffLicense)).append(assets::kJsdiffJs);
    else if (name == "SCRIPT") out.append(assets::kReportJs);
    else if (name == "DATA") append_script_json(out, data);
    else throw std::logic_error("page template: unknown placeholder {{" + std::string(name) + "}}");
    from = close + 2;
  }
  out.append(tpl.substr(from));
  return out;
}

}  // namespace kagent::report
