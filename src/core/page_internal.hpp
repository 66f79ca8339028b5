// Helpers the core's page files share (segment_pages.cpp,
// filter_pages.cpp); not part of the core's API.
#pragma once

#include <cstring>

#include "hash.hpp"
#include "page_layout.hpp"

namespace bloomidx {
namespace page_internal {

// The segment (or filter group) id of a page, in the special space's
// reserved words.
inline void set_segment_id(PageOpaque *op, uint32_t segment_id) noexcept
{
    op->reserved[0] = static_cast<uint16_t>(segment_id);
    op->reserved[1] = static_cast<uint16_t>(segment_id >> 16);
}

inline uint32_t page_segment_id(const uint8_t *page) noexcept
{
    const PageOpaque *op = page_opaque(page);
    return op->reserved[0] | (static_cast<uint32_t>(op->reserved[1]) << 16);
}

// Sets the page's kind, format and bounds (the glue ran PageInit).
inline void set_page(uint8_t *page, uint16_t kind, uint32_t lower) noexcept
{
    write_u16(page + kPdLowerOffset, lower);
    write_u16(page + kPdUpperOffset, kSpecialOffset);
    PageOpaque *op = page_opaque(page);
    op->flags = kind;
    op->format = kFormatSliced;
    op->page_id = kPageId;
}

// Kind, format, page id and the bounds a fixed-layout page must have.
inline PageProblem check_fixed(const uint8_t *page, uint16_t kind, uint16_t format) noexcept
{
    if (read_u16(page + kPdSpecialOffset) != kSpecialOffset ||
        page_opaque(page)->page_id != kPageId)
        return PageProblem::NotBloomidx;
    uint16_t lower = read_u16(page + kPdLowerOffset);
    if (lower < kPageHeaderSize || lower > kSpecialOffset ||
        read_u16(page + kPdUpperOffset) != kSpecialOffset)
        return PageProblem::BadBounds;
    if (page_opaque(page)->flags != kind)
        return PageProblem::WrongKind;
    if (page_opaque(page)->format != format)
        return PageProblem::BadFormat;
    return PageProblem::None;
}

// The hash of a struct with its `check` field taken as 0.
template <typename T> uint32_t check_of(const T &x, uint64_t seed) noexcept
{
    T copy;
    std::memcpy(&copy, &x, sizeof copy);
    copy.check = 0;
    return static_cast<uint32_t>(hash_bytes(&copy, sizeof copy, seed));
}

} // namespace page_internal
} // namespace bloomidx
