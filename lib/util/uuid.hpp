#pragma once

#include <string>
#include <string_view>

namespace ctxkit::util {

// A random (version 4) UUID in its lower-case text form, from the kernel's random source.
std::string random_uuid();

// Whether `text` has a UUID's text form: 8-4-4-4-12 hexadecimal digits (either case).
bool is_uuid(std::string_view text);

}  // namespace ctxkit::util
