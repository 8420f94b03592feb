#pragma once

#include <string>

namespace ctxkit::util {

// A random (version 4) UUID in its lower-case text form, from the kernel's random source.
std::string random_uuid();

}  // namespace ctxkit::util
