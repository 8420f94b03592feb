#include "core/status_format.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include "util/one_line.hpp"

namespace ctxkit::core {

Result<std::vector<StatusPiece>> parse_status_format(std::string_view format) {
  std::vector<StatusPiece> pieces;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) pieces.push_back({std::move(literal), std::nullopt});
    literal.clear();
  };
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        literal += '}';
        ++i;
        continue;
      }
      return fail(
          fmt::format("a '}}' without its '{{' at character {} (write '}}}}' for a brace)", i + 1),
          Error::Kind::Invalid);
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      literal += '{';
      ++i;
      continue;
    }
    size_t close = format.find('}', i + 1);
    if (close == std::string_view::npos)
      return fail(
          fmt::format("a '{{' without its '}}' at character {} (write '{{{{' for a brace)", i + 1),
          Error::Kind::Invalid);
    std::string_view name = format.substr(i + 1, close - i - 1);
    size_t k = 0;
    while (k < kStatusFieldNames.size() && kStatusFieldNames[k] != name) ++k;
    if (k == kStatusFieldNames.size())
      return fail(fmt::format("unknown field '{{{}}}' (known: {})", name,
                              fmt::join(kStatusFieldNames, ", ")),
                  Error::Kind::Invalid);
    flush();
    pieces.push_back({std::string(), static_cast<StatusField>(k)});
    i = close;
  }
  flush();
  return pieces;
}

std::string render_status_format(const std::vector<StatusPiece>& pieces,
                                 const StatusValues& values) {
  std::string out;
  for (const auto& p : pieces) {
    if (p.field)
      out += util::one_line(values[static_cast<size_t>(*p.field)], kMaxStatusFieldBytes);
    else
      out += p.literal;
  }
  return out;
}

}  // namespace ctxkit::core
