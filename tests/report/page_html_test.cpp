#include <doctest/doctest.h>

#include "report/page_html.h"

using namespace kagent::report;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("the page holds its data as JSON that no text from the run can break out of") {
  const nlohmann::json data = {{"kind", "run"}, {"code", "</script><script>alert(1)</script><!-- x"}};
  const std::string page = render_page(data, "a <b> & \"c\"");
  CHECK(page.find("<title>a &lt;b&gt; &amp; &quot;c&quot;</title>") != std::string::npos);
  // Three scripts (data, jsdiff, the page's own), each closed once; the data's "<" are escaped.
  CHECK(count(page, "</script>") == 3);
  CHECK(page.find("alert(1)") != std::string::npos);
  CHECK(page.find(R"(\u003c/script>\u003cscript>alert(1))") != std::string::npos);
  CHECK(page.find("<!-- x") == std::string::npos);
  const auto start = page.find("id=\"kagent-data\">") + 17;
  const auto end = page.find("</script>", start);
  CHECK(nlohmann::json::parse(page.substr(start, end - start)) == data);
}

TEST_CASE("the page is self-contained: inline style and scripts, jsdiff with its license, no URL to load") {
  const std::string page = render_page({{"kind", "run"}}, "t");
  CHECK(page.find("<style>") != std::string::npos);
  CHECK(page.find("BSD 3-Clause License") != std::string::npos);
  CHECK(page.find("Kevin Decker") != std::string::npos);
  CHECK(page.find("diffLines") != std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("{{") == std::string::npos);
}
