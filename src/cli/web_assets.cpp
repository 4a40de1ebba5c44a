// web_assets.cpp: embeds src/cli/web/ with the assembler's .incbin (cli.mk passes the directory as
// PGJQ_WEB_DIR and makes this object depend on the files), so no generated source is needed.
#include "web_assets.hpp"

#define PGJQ_EMBED(symbol, file)                                                                                       \
  __asm__(".pushsection .rodata\n"                                                                                     \
          ".global " #symbol "\n.hidden " #symbol "\n" #symbol ":\n"                                                   \
          ".incbin \"" PGJQ_WEB_DIR "/" file "\"\n"                                                                    \
          ".global " #symbol "_end\n.hidden " #symbol "_end\n" #symbol "_end:\n"                                       \
          ".popsection\n");                                                                                            \
  extern "C" const char symbol[], symbol##_end[];

PGJQ_EMBED(pgjq_web_index_html, "index.html")
PGJQ_EMBED(pgjq_web_dashboard_js, "dashboard.js")
PGJQ_EMBED(pgjq_web_dashboard_css, "dashboard.css")

namespace pgjq::cli
{

std::optional<web_asset> find_web_asset(std::string_view path)
{
  auto of = [](const char *begin, const char *end, const char *type) {
    return web_asset{std::string_view(begin, static_cast<std::size_t>(end - begin)), type};
  };
  if (path == "/")
    return of(pgjq_web_index_html, pgjq_web_index_html_end, "text/html; charset=utf-8");
  if (path == "/dashboard.js")
    return of(pgjq_web_dashboard_js, pgjq_web_dashboard_js_end, "text/javascript; charset=utf-8");
  if (path == "/dashboard.css")
    return of(pgjq_web_dashboard_css, pgjq_web_dashboard_css_end, "text/css; charset=utf-8");
  return std::nullopt;
}

} // namespace pgjq::cli
