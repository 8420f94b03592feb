#include "core/project_folder.hpp"

#include <cstdint>

#include "util/utf8.hpp"

namespace ctxkit::core {

std::string project_folder_name(std::string_view path) {
  const std::u16string units = util::utf16_of(path);
  std::string out;
  out.reserve(units.size());
  // The client's hash: h = h * 31 + unit over the code units, in 32-bit two's complement.
  uint32_t hash = 0;
  for (char16_t u : units) {
    const bool alnum =
        (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9');
    out += alnum ? static_cast<char>(u) : '-';
    hash = hash * 31u + u;
  }
  if (out.size() <= kProjectFolderMax) return out;
  // Math.abs of the signed value, in base 36.
  const auto signed_hash = static_cast<int64_t>(static_cast<int32_t>(hash));
  auto magnitude = static_cast<uint64_t>(signed_hash < 0 ? -signed_hash : signed_hash);
  std::string digits;
  do {
    digits.insert(digits.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[magnitude % 36]);
    magnitude /= 36;
  } while (magnitude > 0);
  out.resize(kProjectFolderMax);
  return out + "-" + digits;
}

}  // namespace ctxkit::core
