// SPDX-License-Identifier: Apache-2.0
// fmt's compiled part, built once here. Every other file includes fmt's headers in their
// default (compiled-library) mode, so the formatting engine is not rebuilt in each of them:
// header-only fmt cost about 5 s of compile per file, half of a fresh build. Debian ships fmt
// as a shared library only (no libfmt.a), and the static VM binary links the same objects as
// the dynamic one, so both take fmt's implementation from this file instead of libfmt.so.
// The templates fmt declares `extern` or leaves to its library are instantiated below.
// (The fuzz build compiles every source header-only: then there is nothing to build here.)
#ifndef FMT_HEADER_ONLY
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;

template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;

template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
#endif  // FMT_HEADER_ONLY
