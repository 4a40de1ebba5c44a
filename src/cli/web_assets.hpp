// web_assets.hpp: the dashboard's page, script and style sheet (src/cli/web/), built into the binary so that
// `pgjq web` needs no files at run time and the browser fetches nothing from elsewhere.
#pragma once

#include <optional>
#include <string_view>

namespace pgjq::cli
{

struct web_asset
{
  std::string_view content;
  const char *content_type;
};

// The asset served at `path` ("/", "/dashboard.js", "/dashboard.css"), if any.
std::optional<web_asset> find_web_asset(std::string_view path);

} // namespace pgjq::cli
