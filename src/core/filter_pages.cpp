// Filter group pages (page_layout.hpp has the format; storage/README.md,
// *Segment filters*, how they are used).
#include <algorithm>
#include <cstring>

#include "page_internal.hpp"
#include "page_layout.hpp"
#include "segment_filter.hpp"

#include "core_guard.hpp"

namespace bloomidx {
using namespace page_internal;

namespace {

// Where a group's header page's list of region blocks starts.
uint32_t header_lower(const FilterGroupHeader &h) noexcept
{
    return kPageHeaderSize + group_header_bytes(h.slot_capacity);
}

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
    // The bytes a page holds: the fixed fields and slot_capacity slots.
    FilterGroupHeader copy;
    const uint32_t bytes = group_header_bytes(h.slot_capacity);
    std::memcpy(&copy, &h, bytes);
    copy.check = 0;
    return static_cast<uint32_t>(hash_bytes(&copy, bytes, kMetaMagic ^ 0xF1));
}

uint32_t group_listed_pages_max(uint32_t capacity, bool pending) noexcept
{
    const uint32_t lower = kPageHeaderSize + group_header_bytes(capacity) +
                           (pending ? static_cast<uint32_t>(sizeof(PendingGroupLinks)) : 0);
    return (kSpecialOffset - lower) / 4;
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

uint32_t group_slots_packed(uint32_t n) noexcept
{
    if (n > kGroupSlots)
        n = kGroupSlots;
    for (uint32_t c = n; c > 1; c--) {
        const uint32_t row = c * kFilterBlockBytes;
        if (uint64_t{kPayloadBytes / row} * row * 100 >= uint64_t{kPayloadBytes} * 85)
            return c;
    }
    return n;
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

bool group_row_of(const FilterGroupHeader &h, uint32_t column, uint32_t key,
                  uint32_t *region_page, uint32_t *offset) noexcept
{
    if (column >= h.ncolumns || column >= kMaxColumns || h.columns[column].blocks == 0)
        return false;
    uint32_t row = region_start(h, column) + filter_block_of(key, h.columns[column].blocks);
    *region_page = row / group_rows_per_page(h);
    *offset = kPageHeaderSize + (row % group_rows_per_page(h)) * group_row_bytes(h);
    return true;
}

SlotMask group_segment_slots(const FilterGroupHeader &h, uint32_t segment_id) noexcept
{
    SlotMask mask = SlotMask::none();
    for (uint32_t s = 0; s < h.slots_taken && s < kGroupSlots; s++)
        if (h.slot_segment[s] == segment_id)
            mask.set(s);
    return mask;
}

uint32_t group_slot_table_size(uint32_t n) noexcept
{
    uint32_t size = 16;
    while (size < 2 * uint64_t{n} && size < (1u << 31))
        size *= 2;
    return size;
}

namespace {

// A slot of the ids' table: the id's place j + 1 (0: empty).
inline uint32_t table_home(uint32_t id, uint32_t mask) noexcept
{
    return static_cast<uint32_t>((uint64_t{id} * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

// The first place of `id` among ids through the table, or n when none.
inline uint32_t table_find(const uint32_t *table, uint32_t mask, const uint32_t *ids, uint32_t n,
                           uint32_t id) noexcept
{
    for (uint32_t at = table_home(id, mask); table[at] != 0; at = (at + 1) & mask)
        if (ids[table[at] - 1] == id)
            return table[at] - 1;
    return n;
}

} // namespace

void group_segments_slot_ranges(const FilterGroupHeader &h, const uint32_t *ids, uint32_t n,
                                uint32_t *table, SlotRange *ranges) noexcept
{
    // Open addressing, linear probing; ids are unique in a directory, and a
    // repeated one (damage) takes the range of its first place, below.
    const uint32_t size = group_slot_table_size(n);
    const uint32_t mask = size - 1;
    std::memset(table, 0, size_t{size} * sizeof *table);
    for (uint32_t j = 0; j < n; j++) {
        ranges[j] = SlotRange::empty();
        for (uint32_t at = table_home(ids[j], mask);; at = (at + 1) & mask) {
            if (table[at] == 0) {
                table[at] = j + 1;
                break;
            }
            if (ids[table[at] - 1] == ids[j])
                break;
        }
    }
    for (uint32_t s = 0; s < h.slots_taken && s < kGroupSlots; s++) {
        const uint32_t j = table_find(table, mask, ids, n, h.slot_segment[s]);
        if (j == n)
            continue;
        SlotRange &r = ranges[j];
        if (r.is_empty())
            r.first = static_cast<uint16_t>(s);
        r.last = static_cast<uint16_t>(s); // slots ascend
    }
    for (uint32_t j = 0; j < n; j++)
        if (ranges[j].is_empty())
            ranges[j] = ranges[table_find(table, mask, ids, n, ids[j])];
}

bool group_slot_owners(const SlotRange *ranges, uint32_t n, int16_t *owner) noexcept
{
    for (uint32_t s = 0; s < kGroupSlots; s++)
        owner[s] = -1;
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t s = ranges[j].first; s <= ranges[j].last && s < kGroupSlots; s++) {
            // (A directory's entries are fewer than 32,767; more is refused.)
            if (owner[s] >= 0 || j > 32767)
                return false;
            owner[s] = static_cast<int16_t>(j);
        }
    return true;
}

void sort_group_order(uint64_t *keys, uint32_t n) noexcept
{
    std::sort(keys, keys + n);
}

SlotMask group_row_probe(const uint8_t *row, uint32_t probes, uint32_t slots,
                         uint32_t key) noexcept
{
    // The key's bits once, then a word a slot, 64 slots a mask word.
    const uint64_t want = filter_probe_mask(probes, key);
    SlotMask mask = SlotMask::none();
    if (slots > kGroupSlots)
        slots = kGroupSlots;
    for (uint32_t s = 0; s < slots; s++) {
        const uint64_t pass = (filter_block_word(row + s * kFilterBlockBytes) & want) == want;
        mask.bits[s / 64] |= pass << (s % 64);
    }
    return mask;
}

SlotMask group_row_probe_within(const uint8_t *row, uint32_t probes, const SlotMask &within,
                                uint32_t key) noexcept
{
    const uint64_t want = filter_probe_mask(probes, key);
    SlotMask mask = SlotMask::none();
    for (uint32_t w = 0; w < SlotMask::kWords; w++)
        for (uint64_t left = within.bits[w]; left != 0; left &= left - 1) {
            const uint32_t s = 64 * w + static_cast<uint32_t>(__builtin_ctzll(left));
            if (s < kGroupSlots &&
                (filter_block_word(row + s * kFilterBlockBytes) & want) == want)
                mask.set(s);
        }
    return mask;
}

void group_image_add(uint8_t *image, const FilterGroupHeader &h, uint32_t column,
                     uint32_t slot, uint32_t key) noexcept
{
    if (column >= h.ncolumns || column >= kMaxColumns || h.columns[column].blocks == 0 ||
        slot >= h.slot_capacity)
        return;
    uint32_t row = region_start(h, column) + filter_block_of(key, h.columns[column].blocks);
    filter_block_add(image + size_t{row} * group_row_bytes(h) + slot * kFilterBlockBytes,
                     h.columns[column].probes, key);
}

void group_image_add_column(uint8_t *image, const FilterGroupHeader &h, uint32_t column,
                            uint32_t slot, const uint32_t *keys, uint32_t n,
                            uint32_t stride, uint8_t *scratch) noexcept
{
    if (column >= h.ncolumns || column >= kMaxColumns || h.columns[column].blocks == 0 ||
        slot >= h.slot_capacity || h.columns[column].blocks > kMaxFilterBlocks)
        return;
    const uint32_t blocks = h.columns[column].blocks;
    const size_t row_bytes = group_row_bytes(h);
    uint8_t *first = image + size_t{region_start(h, column)} * row_bytes + slot * kFilterBlockBytes;

    std::memset(scratch, 0, size_t{blocks} * kFilterBlockBytes);
    filter_add_many(scratch, kFilterBlockBytes, blocks, h.columns[column].probes, keys, n, stride);
    for (uint32_t b = 0; b < blocks; b++) {
        uint8_t *to = first + b * row_bytes;
        const uint8_t *from = scratch + size_t{b} * kFilterBlockBytes;
        for (uint32_t i = 0; i < kFilterBlockBytes; i++)
            to[i] = static_cast<uint8_t>(to[i] | from[i]);
    }
}

void group_image_merge_page(uint8_t *image, const FilterGroupHeader &to,
                            const FilterGroupHeader &from, uint32_t region_page,
                            const uint8_t *rows, const int16_t slot_map[kGroupSlots]) noexcept
{
    const uint32_t per_page = group_rows_per_page(from);
    const uint32_t total = group_region_rows(from);
    const uint32_t from_bytes = group_row_bytes(from);
    const uint32_t to_bytes = group_row_bytes(to);
    const uint32_t first = region_page * per_page;
    const uint32_t ncolumns = from.ncolumns < kMaxColumns ? from.ncolumns : kMaxColumns;
    uint32_t column = 0, start = 0;

    for (uint32_t r = first; r < first + per_page && r < total; r++) {
        while (column < ncolumns && r >= start + from.columns[column].blocks)
            start += from.columns[column++].blocks;
        if (column >= ncolumns || column >= to.ncolumns)
            break;
        const FilterColumn &fc = from.columns[column];
        const FilterColumn &tc = to.columns[column];
        if (tc.blocks == 0 || tc.probes != fc.probes || tc.blocks < fc.blocks)
            continue;
        uint32_t lo, hi;
        filter_widened_blocks(r - start, fc.blocks, tc.blocks, &lo, &hi);
        const uint8_t *src = rows + size_t{r - first} * from_bytes;
        const size_t to_start = region_start(to, column);
        for (uint32_t s = 0; s < from.slots_taken && s < kGroupSlots; s++) {
            if (slot_map[s] < 0 || static_cast<uint32_t>(slot_map[s]) >= to.slot_capacity)
                continue;
            for (uint32_t t = lo; t <= hi && t < tc.blocks; t++) {
                uint8_t *dst = image + (to_start + t) * to_bytes + slot_map[s] * kFilterBlockBytes;
                for (uint32_t i = 0; i < kFilterBlockBytes; i++)
                    dst[i] = static_cast<uint8_t>(dst[i] | src[s * kFilterBlockBytes + i]);
            }
        }
    }
}

namespace {

// The column holding row `row` of h (h.ncolumns when none) and its start.
uint32_t column_of_row(const FilterGroupHeader &h, uint32_t row, uint32_t *start) noexcept
{
    const uint32_t ncolumns = h.ncolumns < kMaxColumns ? h.ncolumns : kMaxColumns;
    uint32_t c = 0, at = 0;
    while (c < ncolumns && row >= at + h.columns[c].blocks)
        at += h.columns[c++].blocks;
    *start = at;
    return c;
}

// Whether column c of `from` widens into column c of `to` (filtered there).
bool widens_into(const FilterColumn &fc, const FilterColumn &tc) noexcept
{
    return fc.blocks > 0 && fc.probes == tc.probes && fc.blocks <= tc.blocks;
}

} // namespace

void group_source_window(const FilterGroupHeader &to, uint32_t first, uint32_t n,
                         const FilterGroupHeader &from, uint32_t *first_row,
                         uint32_t *end_row) noexcept
{
    uint32_t lo_row = UINT32_MAX, end = 0;
    const uint32_t total = group_region_rows(to);
    const uint32_t last = n == 0 || first >= total ? first : (first + n <= total ? first + n : total);
    uint32_t start = 0;
    uint32_t c = column_of_row(to, first, &start);

    for (uint32_t r = first; r < last && c < to.ncolumns && c < from.ncolumns;) {
        const FilterColumn &tc = to.columns[c];
        const FilterColumn &fc = from.columns[c];
        const uint32_t column_end = start + tc.blocks < last ? start + tc.blocks : last;
        if (widens_into(fc, tc)) {
            uint32_t a, b, ignored;
            filter_widened_blocks(r - start, tc.blocks, fc.blocks, &a, &ignored);
            filter_widened_blocks(column_end - 1 - start, tc.blocks, fc.blocks, &ignored, &b);
            const uint32_t from_start = region_start(from, c);
            if (from_start + a < lo_row)
                lo_row = from_start + a;
            if (from_start + b + 1 > end)
                end = from_start + b + 1;
        }
        r = column_end;
        start += tc.blocks;
        c++;
        while (c < to.ncolumns && c < kMaxColumns && to.columns[c].blocks == 0)
            c++;
    }
    *first_row = end > 0 ? lo_row : 0;
    *end_row = end;
}

bool group_rows_compose(uint8_t *out, const FilterGroupHeader &to, uint32_t first, uint32_t n,
                        const GroupRowsSource *sources, uint32_t nsources) noexcept
{
    const uint32_t to_bytes = group_row_bytes(to);
    if (uint64_t{first} + n > group_region_rows(to))
        return false;
    for (uint32_t i = 0; i < nsources; i++) {
        const FilterGroupHeader &from = *sources[i].header;
        if (from.slots_taken > kGroupSlots ||
            uint64_t{sources[i].slot_base} + from.slots_taken > to.slot_capacity ||
            from.ncolumns != to.ncolumns)
            return false;
    }
    std::memset(out, 0, size_t{n} * to_bytes);

    uint32_t start = 0;
    uint32_t c = column_of_row(to, first, &start);
    for (uint32_t r = first; r < first + n; r++) {
        while (c < to.ncolumns && r >= start + to.columns[c].blocks)
            start += to.columns[c++].blocks;
        if (c >= to.ncolumns)
            return false;
        const FilterColumn &tc = to.columns[c];
        uint8_t *dst = out + size_t{r - first} * to_bytes;
        for (uint32_t i = 0; i < nsources; i++) {
            const GroupRowsSource &src = sources[i];
            const FilterGroupHeader &from = *src.header;
            if (!widens_into(from.columns[c], tc))
                return false;
            uint32_t a, b;
            filter_widened_blocks(r - start, tc.blocks, from.columns[c].blocks, &a, &b);
            const uint32_t from_start = region_start(from, c);
            const uint32_t from_bytes = group_row_bytes(from);
            if (from_start + a < src.first_row || from_start + b >= src.end_row)
                return false;
            for (uint32_t fb = a; fb <= b; fb++) {
                const uint8_t *row = src.rows + size_t{from_start + fb - src.first_row} * from_bytes;
                uint8_t *to_slot = dst + size_t{src.slot_base} * kFilterBlockBytes;
                for (uint32_t k = 0; k < uint32_t{from.slots_taken} * kFilterBlockBytes; k++)
                    to_slot[k] = static_cast<uint8_t>(to_slot[k] | row[k]);
            }
        }
    }
    return true;
}

void merged_group_init(FilterGroupHeader *h, const FilterGroupHeader *sources, uint32_t nsources,
                       uint32_t ncolumns, uint32_t slots) noexcept
{
    std::memset(h, 0, sizeof *h);
    h->ncolumns = static_cast<uint16_t>(ncolumns);
    h->slot_capacity = static_cast<uint16_t>(slots >= 1 && slots <= kGroupSlots ? slots : 1);
    for (uint32_t c = 0; c < ncolumns && c < kMaxColumns && nsources > 0; c++) {
        FilterColumn out = sources[0].columns[c];
        for (uint32_t i = 1; i < nsources && out.blocks > 0; i++) {
            const FilterColumn &fc = sources[i].columns[c];
            if (fc.blocks == 0 || fc.probes != out.probes)
                out.blocks = 0;
            else if (fc.blocks > out.blocks)
                out.blocks = fc.blocks;
        }
        if (out.blocks == 0)
            out.probes = 0;
        out.reserved = 0;
        h->columns[c] = out;
    }
    h->region_pages = group_region_pages(*h);
    h->check = filter_group_check(*h);
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

void filter_group_page_fill(uint8_t *page, const FilterGroupHeader &h,
                            const uint32_t *region_blocks) noexcept
{
    FilterGroupHeader copy;
    std::memcpy(&copy, &h, group_header_bytes(h.slot_capacity));
    copy.check = filter_group_check(copy);
    std::memcpy(page + kPageHeaderSize, &copy, group_header_bytes(copy.slot_capacity));
    uint32_t listed = (copy.flags & kGroupListed) && region_blocks != nullptr &&
                              copy.region_pages <= group_listed_pages_max(copy.slot_capacity, false)
                          ? copy.region_pages
                          : 0;
    if (listed > 0)
        std::memcpy(page + header_lower(copy), region_blocks, size_t{listed} * 4);
    set_page(page, kPageFilterGroup, header_lower(copy) + listed * 4);
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
    // The page's place in its group, 32 bits over the two 16-bit fields.
    op->count = static_cast<uint16_t>(region_page >> 16);
    op->signature_sum = page_sum(page + kPageHeaderSize, bytes);
    op->tid_sum = static_cast<uint16_t>(region_page);
    set_segment_id(op, h.group_id);
}

uint32_t group_region_block(const uint8_t *header_page, uint32_t header_block,
                            uint32_t i) noexcept
{
    const FilterGroupHeader *h = filter_group_header(header_page);
    if (!(h->flags & kGroupListed))
        return header_block + 1 + i;
    uint32_t block;
    std::memcpy(&block, header_page + header_lower(*h) + size_t{i} * 4, sizeof block);
    return block;
}

int64_t filter_page_place(const uint8_t *page, uint32_t *group_id) noexcept
{
    const PageOpaque *op = page_opaque(page);
    if (read_u16(page + kPdSpecialOffset) != kSpecialOffset || op->page_id != kPageId ||
        op->format != kFormatSliced)
        return -1;
    *group_id = page_segment_id(page);
    if (op->flags == kPageFilterGroup)
        return 0;
    if (op->flags == kPageFilter)
        return 1 + (int64_t{op->count} << 16 | op->tid_sum);
    return -1;
}

namespace {

// Where a pending group's links lie on its header page: after the list.
size_t links_offset(const FilterGroupHeader &h) noexcept
{
    return header_lower(h) + size_t{h.region_pages} * 4;
}

PageProblem check_group_page(const uint8_t *page, uint32_t group_id, uint32_t ncolumns,
                             uint32_t header_block, uint32_t nblocks, bool pending) noexcept;

} // namespace

uint32_t pending_links_check(const PendingGroupLinks &l) noexcept
{
    return check_of(l, kMetaMagic ^ 0xE7);
}

PendingGroupLinks pending_group_links(const uint8_t *header_page) noexcept
{
    PendingGroupLinks l;
    std::memcpy(&l, header_page + links_offset(*filter_group_header(header_page)), sizeof l);
    return l;
}

void pending_group_page_fill(uint8_t *page, const FilterGroupHeader &h,
                             const uint32_t *region_blocks, const PendingGroupLinks &links) noexcept
{
    filter_group_page_fill(page, h, region_blocks);
    PendingGroupLinks l = links;
    l.check = pending_links_check(l);
    std::memcpy(page + links_offset(h), &l, sizeof l);
    write_u16(page + kPdLowerOffset, static_cast<uint16_t>(links_offset(h) + sizeof l));
}

void pending_group_init(FilterGroupHeader *h, uint32_t group_id, uint32_t ncolumns,
                        uint32_t rows, double bits_per_key) noexcept
{
    uint32_t distinct[kMaxColumns];
    for (uint32_t c = 0; c < kMaxColumns; c++)
        distinct[c] = rows;
    filter_group_init(h, group_id, ncolumns, distinct, bits_per_key, kPendingGroupSlots);
    h->flags = kGroupListed | kGroupPending;
    h->check = filter_group_check(*h);
}

void pending_slots_write(uint8_t *region_page, const FilterGroupHeader &h, uint32_t i,
                         uint32_t first, uint32_t n, const uint8_t *const *column_blocks) noexcept
{
    const uint32_t per_page = group_rows_per_page(h);
    const uint32_t row_bytes = group_row_bytes(h);
    const uint32_t rows = group_region_rows(h);
    for (uint32_t r = i * per_page; r < (i + 1) * per_page && r < rows; r++) {
        uint32_t start = 0;
        uint32_t c = column_of_row(h, r, &start);
        if (c >= h.ncolumns)
            continue;
        const size_t row_offset = size_t{r - i * per_page} * row_bytes;
        for (uint32_t j = 0; j < n && first + j < h.slot_capacity; j++) {
            const uint8_t *blocks = column_blocks[size_t{j} * kMaxColumns + c];
            if (blocks == nullptr)
                continue;
            // The page's sum follows the block's words (page_sum_change), not
            // summed again over the page: a sum damage left wrong stays so,
            // for scans and bloomidx_verify to find, as an append's does.
            const size_t at = row_offset + size_t{first + j} * kFilterBlockBytes;
            uint8_t *dst = region_page + kPageHeaderSize + at;
            const uint8_t *src = blocks + size_t{r - start} * kFilterBlockBytes;
            uint16_t gain = 0;
            for (uint32_t w = 0; w < kFilterBlockBytes / 2; w++)
                gain = static_cast<uint16_t>(
                    gain + page_sum_change(static_cast<uint32_t>(at / 2 + w), read_u16(dst + 2 * w),
                                           read_u16(src + 2 * w)));
            std::memcpy(dst, src, kFilterBlockBytes);
            page_opaque(region_page)->signature_sum =
                static_cast<uint16_t>(page_opaque(region_page)->signature_sum + gain);
        }
    }
}

uint32_t pending_slots_ranges(const FilterGroupHeader &h, uint32_t i, uint32_t first, uint32_t n,
                              PageRange out[kPendingSlotRanges]) noexcept
{
    const uint32_t per_page = group_rows_per_page(h);
    const uint32_t row_bytes = group_row_bytes(h);
    const uint32_t rows = group_region_rows(h);
    const uint32_t slots = first >= h.slot_capacity ? 0 : std::min(n, h.slot_capacity - first);
    uint32_t count = 0;
    for (uint32_t r = i * per_page; r < (i + 1) * per_page && r < rows && slots > 0; r++) {
        uint32_t start = 0;
        if (column_of_row(h, r, &start) >= h.ncolumns)
            continue;
        const size_t offset = kPageHeaderSize + size_t{r - i * per_page} * row_bytes +
                              size_t{first} * kFilterBlockBytes;
        if (count + 1 >= kPendingSlotRanges || offset + slots * kFilterBlockBytes > kSpecialOffset)
            return 0;
        out[count++] = PageRange{static_cast<uint16_t>(offset),
                                 static_cast<uint16_t>(slots * kFilterBlockBytes)};
    }
    out[count++] = PageRange{static_cast<uint16_t>(kSpecialOffset), sizeof(PageOpaque)};
    return count;
}

PageProblem check_pending_group_page(const uint8_t *page, uint32_t group_id, uint32_t ncolumns,
                                     uint32_t header_block, uint32_t nblocks) noexcept
{
    return check_group_page(page, group_id, ncolumns, header_block, nblocks, true);
}

PageProblem check_filter_group_page(const uint8_t *page, uint32_t group_id, uint32_t ncolumns,
                                    uint32_t header_block, uint32_t nblocks) noexcept
{
    return check_group_page(page, group_id, ncolumns, header_block, nblocks, false);
}

namespace {

PageProblem check_group_page(const uint8_t *page, uint32_t group_id, uint32_t ncolumns,
                             uint32_t header_block, uint32_t nblocks, bool pending) noexcept
{
    PageProblem p = check_fixed(page, kPageFilterGroup, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    FilterGroupHeader h;
    std::memcpy(&h, page + kPageHeaderSize, kGroupHeaderFixedBytes);
    if (h.slot_capacity < 1 || h.slot_capacity > kGroupSlots)
        return PageProblem::BadFilter;
    std::memcpy(&h, page + kPageHeaderSize, group_header_bytes(h.slot_capacity));
    std::memset(&h.slot_segment[h.slot_capacity], 0,
                sizeof h.slot_segment - size_t{h.slot_capacity} * 4);
    if (page_segment_id(page) != group_id || h.group_id != group_id)
        return PageProblem::BadFilter;
    if (h.check != filter_group_check(h))
        return PageProblem::BadFilter;
    if (h.ncolumns != ncolumns || h.slots_taken > h.slot_capacity ||
        page_opaque(page)->count != h.slots_taken ||
        (pending ? h.flags != (kGroupListed | kGroupPending) || h.slot_capacity != kPendingGroupSlots
                 : (h.flags & ~kGroupListed) != 0))
        return PageProblem::BadFilter;
    const bool listed = (h.flags & kGroupListed) != 0;
    // A pending group's links follow the list (and must fit before the special space).
    const uint32_t links = pending ? sizeof(PendingGroupLinks) : 0;
    if (listed && h.region_pages > group_listed_pages_max(h.slot_capacity, pending))
        return PageProblem::BadFilter;
    if (read_u16(page + kPdLowerOffset) !=
        header_lower(h) + (listed ? h.region_pages * 4 : 0) + links)
        return PageProblem::BadFilter;
    for (uint32_t c = 0; c < kMaxColumns; c++) {
        const FilterColumn &fc = h.columns[c];
        bool off = fc.blocks == 0;
        if (fc.reserved != 0 || (c >= ncolumns && !off) || fc.blocks > kMaxFilterBlocks ||
            (off ? fc.probes != 0 : (fc.probes == 0 || fc.probes > kFilterMaxProbes)))
            return PageProblem::BadFilter;
    }
    for (uint32_t slot = 0; slot < h.slot_capacity; slot++)
        if ((slot < h.slots_taken) != (h.slot_segment[slot] != 0))
            return PageProblem::BadFilter;
    // A group of one segment's own is listed and named after it; a group of
    // many takes an id above every segment's, at a run of blocks (a
    // build's) or listed (one VACUUM gathered, format 15).
    const bool own = group_id < kFirstGroupId;
    if (own && (!listed || pending))
        return PageProblem::BadFilter;
    for (uint32_t slot = 0; slot < h.slots_taken; slot++)
        if (pending ? h.slot_segment[slot] >= nblocks || h.slot_segment[slot] == header_block
                    : own ? h.slot_segment[slot] != group_id : h.slot_segment[slot] >= kFirstGroupId)
            return PageProblem::BadFilter;
    if (pending) {
        PendingGroupLinks l = pending_group_links(page);
        if (l.check != pending_links_check(l) || (l.next_group == 0) != (l.next_group_id == 0) ||
            (l.next_group != 0 && (l.next_group_id < kFirstGroupId || l.next_group >= nblocks ||
                                   l.next_group == header_block ||
                                   h.slots_taken != h.slot_capacity)) ||
            l.after >= nblocks || (l.after == 0) != (h.slots_taken == 0))
            return PageProblem::BadFilter;
    }
    if (h.region_pages != group_region_pages(h))
        return PageProblem::BadFilter;
    if (!listed)
        return uint64_t{header_block} + 1 + h.region_pages > nblocks ? PageProblem::BadFilter
                                                                     : PageProblem::None;
    // Listed region pages: past the metapage, within the index, not the header.
    for (uint32_t i = 0; i < h.region_pages; i++) {
        uint32_t block = group_region_block(page, header_block, i);
        if (block == kMetaBlock || block >= nblocks || block == header_block)
            return PageProblem::BadFilter;
    }
    return PageProblem::None;
}

} // namespace

PageProblem check_filter_page(const uint8_t *page, const FilterGroupHeader &h,
                              uint32_t region_page, Sums sums) noexcept
{
    PageProblem p = check_fixed(page, kPageFilter, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    const uint32_t bytes = page_row_bytes(h);
    if (read_u16(page + kPdLowerOffset) != kPageHeaderSize + bytes ||
        op->count != (region_page >> 16) || op->tid_sum != (region_page & 0xFFFF) ||
        page_segment_id(page) != h.group_id)
        return PageProblem::BadFilter;
    if (sums == Sums::Verify && page_sum(page + kPageHeaderSize, bytes) != op->signature_sum)
        return PageProblem::BadFilterBits;
    return PageProblem::None;
}

} // namespace bloomidx
