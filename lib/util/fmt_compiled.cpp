// fmt's compiled part, built once for the whole library.
//
// Debian ships fmt as headers and a shared library. The programs link statically (a hook's start
// loads no shared C++ library), so the library cannot use the shared one; used header-only, every
// file that includes <fmt/core.h> compiled fmt's implementation again (format-inl.h: the float
// formatting tables, vformat, the error reporting), at about 1.4 s of CPU each. Here it is
// compiled once: the other files include fmt in its normal mode and call what this file defines.
// The templates the headers only declare are instantiated below for the types the library formats
// (char; float and double for the shortest round-trip digits).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
// Declared in core.h and defined in format.h: a file that includes core.h alone relies on it.
template FMT_API void buffer<char>::append(const char*, const char*);
// format.h declares these extern for wchar_t as well; nothing here formats wide text, but a
// file that did would find them.
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
