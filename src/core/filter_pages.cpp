// Filter group pages (page_layout.hpp has the format; src/segments.md,
// *Segment filters*, how they are used).
#include <cstring>

#include "page_internal.hpp"
#include "page_layout.hpp"
#include "segment_filter.hpp"

#include "core_guard.hpp"

namespace bloomidx {
using namespace page_internal;

namespace {

constexpr uint32_t kGroupHeaderLower = kPageHeaderSize + sizeof(FilterGroupHeader);

// The bytes of rows a region page holds.
uint32_t page_row_bytes(const FilterGroupHeader &h) noexcept
{
    return group_rows_per_page(h) * group_row_bytes(h);
}

// The first block row of column c's region.
uint32_t region_start(const FilterGroupHeader &h, uint32_t column) noexcept
{
    uint32_t row = 0;
    for (uint32_t c = 0; c < column; c++)
        row += h.columns[c].blocks;
    return row;
}

} // namespace

uint32_t filter_group_check(const FilterGroupHeader &h) noexcept
{
    return check_of(h, kMetaMagic ^ 0xF1);
}

uint32_t group_row_bytes(const FilterGroupHeader &h) noexcept
{
    uint32_t capacity = h.slot_capacity >= 1 && h.slot_capacity <= kGroupSlots ? h.slot_capacity
                                                                              : kGroupSlots;
    return capacity * kFilterBlockBytes;
}

uint32_t group_rows_per_page(const FilterGroupHeader &h) noexcept
{
    return kPayloadBytes / group_row_bytes(h);
}

uint32_t group_region_rows(const FilterGroupHeader &h) noexcept
{
    return region_start(h, h.ncolumns <= kMaxColumns ? h.ncolumns : kMaxColumns);
}

uint32_t group_region_pages(const FilterGroupHeader &h) noexcept
{
    return (group_region_rows(h) + group_rows_per_page(h) - 1) / group_rows_per_page(h);
}

void filter_group_init(FilterGroupHeader *h, uint32_t group_id, uint32_t ncolumns,
                       const uint32_t *distinct, double bits_per_key, uint32_t capacity) noexcept
{
    std::memset(h, 0, sizeof *h);
    h->group_id = group_id;
    h->slot_capacity = static_cast<uint16_t>(capacity >= 1 && capacity <= kGroupSlots ? capacity
                                                                                     : kGroupSlots);
    h->ncolumns = static_cast<uint16_t>(ncolumns);
    uint32_t probes = bits_per_key > 0 ? filter_probes(bits_per_key) : 0;
    for (uint32_t c = 0; c < ncolumns && c < kMaxColumns && probes > 0; c++) {
        h->columns[c].blocks =
            static_cast<uint16_t>(filter_blocks(distinct[c], bits_per_key, kMaxFilterBlocks));
        h->columns[c].probes = static_cast<uint8_t>(probes);
    }
    h->region_pages = group_region_pages(*h);
    h->check = filter_group_check(*h);
}

bool group_row_of(const FilterGroupHeader &h, uint32_t column, uint64_t hash,
                  uint32_t *region_page, uint32_t *offset) noexcept
{
    if (column >= h.ncolumns || column >= kMaxColumns || h.columns[column].blocks == 0)
        return false;
    uint32_t row = region_start(h, column) + filter_block_of(hash, h.columns[column].blocks);
    *region_page = row / group_rows_per_page(h);
    *offset = kPageHeaderSize + (row % group_rows_per_page(h)) * group_row_bytes(h);
    return true;
}

uint32_t group_row_probe(const uint8_t *row, uint32_t probes, uint32_t slots,
                         uint64_t hash) noexcept
{
    uint32_t mask = 0;
    for (uint32_t s = 0; s < slots && s < kGroupSlots; s++)
        if (filter_block_may_contain(row + s * kFilterBlockBytes, probes, hash))
            mask |= 1u << s;
    return mask;
}

void group_image_add(uint8_t *image, const FilterGroupHeader &h, uint32_t column,
                     uint32_t slot, uint64_t hash) noexcept
{
    if (column >= h.ncolumns || column >= kMaxColumns || h.columns[column].blocks == 0 ||
        slot >= h.slot_capacity)
        return;
    uint32_t row = region_start(h, column) + filter_block_of(hash, h.columns[column].blocks);
    filter_block_add(image + size_t{row} * group_row_bytes(h) + slot * kFilterBlockBytes,
                     h.columns[column].probes, hash);
}

void group_image_add_column(uint8_t *image, const FilterGroupHeader &h, uint32_t column,
                            uint32_t slot, const uint64_t *hashes, uint32_t n,
                            uint32_t stride, uint8_t *scratch) noexcept
{
    if (column >= h.ncolumns || column >= kMaxColumns || h.columns[column].blocks == 0 ||
        slot >= h.slot_capacity || h.columns[column].blocks > kMaxFilterBlocks)
        return;
    const uint32_t blocks = h.columns[column].blocks;
    const size_t row_bytes = group_row_bytes(h);
    uint8_t *first = image + size_t{region_start(h, column)} * row_bytes + slot * kFilterBlockBytes;

    std::memset(scratch, 0, size_t{blocks} * kFilterBlockBytes);
    filter_add_many(scratch, kFilterBlockBytes, blocks, h.columns[column].probes, hashes, n, stride);
    for (uint32_t b = 0; b < blocks; b++) {
        uint8_t *to = first + b * row_bytes;
        const uint8_t *from = scratch + size_t{b} * kFilterBlockBytes;
        for (uint32_t i = 0; i < kFilterBlockBytes; i++)
            to[i] = static_cast<uint8_t>(to[i] | from[i]);
    }
}

void group_image_shrink(uint8_t *image, FilterGroupHeader *h) noexcept
{
    uint32_t from = group_row_bytes(*h);
    uint32_t slots = h->slots_taken >= 1 ? h->slots_taken : 1;
    if (slots >= h->slot_capacity)
        return;
    uint32_t to = slots * kFilterBlockBytes;
    uint32_t rows = group_region_rows(*h);
    // Rows move down (to < from): in ascending order nothing is overwritten before it moves.
    for (uint32_t r = 0; r < rows; r++)
        std::memmove(image + size_t{r} * to, image + size_t{r} * from, to);
    h->slot_capacity = static_cast<uint16_t>(slots);
    h->region_pages = group_region_pages(*h);
}

void filter_group_page_fill(uint8_t *page, const FilterGroupHeader &h) noexcept
{
    FilterGroupHeader copy = h;
    copy.check = filter_group_check(copy);
    std::memcpy(page + kPageHeaderSize, &copy, sizeof copy);
    set_page(page, kPageFilterGroup, kGroupHeaderLower);
    PageOpaque *op = page_opaque(page);
    op->count = copy.slots_taken;
    op->signature_sum = 0;
    op->tid_sum = 0;
    set_segment_id(op, copy.group_id);
}

void filter_page_fill(uint8_t *page, const FilterGroupHeader &h, const uint8_t *rows,
                      uint32_t nrows, uint32_t region_page) noexcept
{
    const uint32_t bytes = page_row_bytes(h);
    if (nrows > group_rows_per_page(h))
        nrows = group_rows_per_page(h);
    std::memcpy(page + kPageHeaderSize, rows, size_t{nrows} * group_row_bytes(h));
    std::memset(page + kPageHeaderSize + nrows * group_row_bytes(h), 0,
                bytes - nrows * group_row_bytes(h));
    set_page(page, kPageFilter, kPageHeaderSize + bytes);
    PageOpaque *op = page_opaque(page);
    op->count = 0;
    op->signature_sum = page_sum(page + kPageHeaderSize, bytes);
    op->tid_sum = static_cast<uint16_t>(region_page);
    set_segment_id(op, h.group_id);
}

PageProblem check_filter_group_page(const uint8_t *page, uint32_t group_id, uint32_t ncolumns,
                                    uint32_t header_block, uint32_t nblocks) noexcept
{
    PageProblem p = check_fixed(page, kPageFilterGroup, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    FilterGroupHeader h;
    std::memcpy(&h, page + kPageHeaderSize, sizeof h);
    if (read_u16(page + kPdLowerOffset) != kGroupHeaderLower ||
        page_segment_id(page) != group_id || h.group_id != group_id)
        return PageProblem::BadFilter;
    if (h.check != filter_group_check(h))
        return PageProblem::BadFilter;
    if (h.ncolumns != ncolumns || h.slot_capacity < 1 || h.slot_capacity > kGroupSlots ||
        h.slots_taken > h.slot_capacity || page_opaque(page)->count != h.slots_taken ||
        h.reserved != 0)
        return PageProblem::BadFilter;
    for (uint32_t c = 0; c < kMaxColumns; c++) {
        const FilterColumn &fc = h.columns[c];
        bool off = fc.blocks == 0;
        if (fc.reserved != 0 || (c >= ncolumns && !off) || fc.blocks > kMaxFilterBlocks ||
            (off ? fc.probes != 0 : (fc.probes == 0 || fc.probes > kFilterMaxProbes)))
            return PageProblem::BadFilter;
    }
    for (uint32_t slot = 0; slot < kGroupSlots; slot++)
        if ((slot < h.slots_taken) != (h.slot_segment[slot] != 0))
            return PageProblem::BadFilter;
    if (h.slots_taken > 0 && h.slot_segment[0] != group_id)
        return PageProblem::BadFilter;
    if (h.region_pages != group_region_pages(h) ||
        uint64_t{header_block} + 1 + h.region_pages > nblocks)
        return PageProblem::BadFilter;
    return PageProblem::None;
}

PageProblem check_filter_page(const uint8_t *page, const FilterGroupHeader &h,
                              uint32_t region_page, Sums sums) noexcept
{
    PageProblem p = check_fixed(page, kPageFilter, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    const uint32_t bytes = page_row_bytes(h);
    if (read_u16(page + kPdLowerOffset) != kPageHeaderSize + bytes || op->count != 0 ||
        op->tid_sum != region_page || page_segment_id(page) != h.group_id)
        return PageProblem::BadFilter;
    if (sums == Sums::Verify && page_sum(page + kPageHeaderSize, bytes) != op->signature_sum)
        return PageProblem::BadFilterBits;
    return PageProblem::None;
}

} // namespace bloomidx
