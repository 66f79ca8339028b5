// The pages of a segment other than its slices (page_layout.hpp has the
// formats): the header, the TID pages, the live page; and the metapage's
// directory header.
#include <algorithm>
#include <cstring>

#include "hash.hpp"
#include "page_internal.hpp"
#include "page_layout.hpp"

#include "core_guard.hpp"

namespace bloomidx {
using namespace page_internal;

namespace {

constexpr uint32_t kHeaderLower = kPageHeaderSize + sizeof(SegmentHeader);

} // namespace


uint32_t directory_check(const DirectoryHeader &d) noexcept
{
    return check_of(d, kMetaMagic ^ 0xD1);
}

void directory_init(DirectoryHeader *d) noexcept
{
    std::memset(d, 0, sizeof *d);
    d->next_segment_id = 1;
    d->next_group_id = kFirstGroupId;
    d->generation = 1;
    d->check = directory_check(*d);
}

uint32_t free_list_check(const FreeList &l) noexcept
{
    return check_of(l, kMetaMagic ^ 0xF7);
}

void free_list_init(FreeList *l) noexcept
{
    std::memset(l, 0, sizeof *l);
    l->check = free_list_check(*l);
}

uint32_t pending_filters_check(const PendingFilters &f) noexcept
{
    return check_of(f, kMetaMagic ^ 0xE5);
}

void pending_filters_set(PendingFilters *f, uint32_t block, uint32_t group_id) noexcept
{
    std::memset(f, 0, sizeof *f);
    f->first_group = block;
    f->first_group_id = group_id;
    f->check = pending_filters_check(*f);
}

uint32_t directory_page_list_check(const DirectoryPageList &l) noexcept
{
    return check_of(l, kMetaMagic ^ 0xD7);
}

void directory_page_list_init(DirectoryPageList *l) noexcept
{
    std::memset(l, 0, sizeof *l);
    l->check = directory_page_list_check(*l);
}

uint32_t directory_apply(SegmentEntry *entries, uint32_t n, const uint32_t *removed,
                         uint32_t nremoved, const SegmentEntry *added) noexcept
{
    auto is_removed = [&](uint32_t id) {
        for (uint32_t k = 0; k < nremoved; k++)
            if (removed[k] == id)
                return true;
        return false;
    };
    uint32_t found = 0;
    uint32_t end = n;
    bool placed = added == nullptr;
    for (uint32_t h = 0; h < end; h++) {
        if (!is_removed(entries[h].segment_id))
            continue;
        found++;
        if (!placed) {
            entries[h] = *added;
            placed = true;
            continue;
        }
        // The last entry kept fills the hole; removed ones at the end go.
        while (end > h + 1 && is_removed(entries[end - 1].segment_id)) {
            end--;
            found++;
        }
        if (end == h + 1) {
            end = h;
            break;
        }
        entries[h] = entries[--end];
    }
    if (found != nremoved)
        return UINT32_MAX;
    if (!placed)
        entries[end++] = *added;
    return end;
}

bool directory_refile(SegmentEntry *entries, uint32_t n, const SegmentEntry *refiled,
                      uint32_t nrefiled) noexcept
{
    for (uint32_t r = 0; r < nrefiled; r++) {
        uint32_t found = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (entries[i].segment_id != refiled[r].segment_id)
                continue;
            entries[i].filter_block = refiled[r].filter_block;
            entries[i].filter_offset = refiled[r].filter_offset;
            entries[i].filter_group = refiled[r].filter_group;
            entries[i].check = segment_entry_check(entries[i]);
            found++;
        }
        if (found != 1)
            return false;
    }
    return true;
}

void directory_page_fill(uint8_t *page, const SegmentEntry *entries, uint16_t count,
                         uint16_t place) noexcept
{
    std::memcpy(page + kPageHeaderSize, entries, count * sizeof(SegmentEntry));
    set_page(page, kPageDirectory, kPageHeaderSize + count * sizeof(SegmentEntry));
    PageOpaque *op = page_opaque(page);
    op->count = count;
    op->tid_sum = place;
    directory_page_resum(page);
}

void directory_page_resum(uint8_t *page) noexcept
{
    PageOpaque *op = page_opaque(page);
    op->signature_sum = page_sum(page + kPageHeaderSize, op->count * sizeof(SegmentEntry));
}

void directory_page_entry_changed(uint8_t *page, uint32_t place,
                                  const SegmentEntry &before) noexcept
{
    constexpr uint32_t kWords = sizeof(SegmentEntry) / 2;
    const uint8_t *now = page + kPageHeaderSize + place * sizeof(SegmentEntry);
    const uint8_t *old = reinterpret_cast<const uint8_t *>(&before);
    PageOpaque *op = page_opaque(page);
    for (uint32_t w = 0; w < kWords; w++)
        op->signature_sum = static_cast<uint16_t>(
            op->signature_sum + page_sum_change(place * kWords + w, read_u16(old + 2 * w),
                                                read_u16(now + 2 * w)));
}

PageProblem check_directory_page(const uint8_t *page, uint16_t count, uint16_t place) noexcept
{
    PageProblem p = check_fixed(page, kPageDirectory, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    if (op->count != count || count > kDirectoryPageEntries || op->tid_sum != place ||
        read_u16(page + kPdLowerOffset) != kPageHeaderSize + count * sizeof(SegmentEntry) ||
        op->reserved[0] != 0 || op->reserved[1] != 0)
        return PageProblem::BadDirectory;
    if (page_sum(page + kPageHeaderSize, count * sizeof(SegmentEntry)) != op->signature_sum)
        return PageProblem::BadDirectory;
    return PageProblem::None;
}

namespace {
// Whether [a, a + n) and [b, b + m) share a block.
bool overlaps(uint64_t a, uint64_t n, uint64_t b, uint64_t m) noexcept
{
    return a < b + m && b < a + n;
}

uint64_t extent_end(const FreeExtent &e) noexcept
{
    return static_cast<uint64_t>(e.first) + e.nblocks;
}

void remove_extent(FreeList *l, uint32_t i) noexcept
{
    l->extents[i] = l->extents[l->count - 1];
    l->extents[--l->count] = FreeExtent{0, 0};
}
} // namespace

bool free_list_overlaps(const FreeList &l, uint32_t first, uint32_t n) noexcept
{
    for (uint32_t i = 0; i < l.count && i < kMaxFreeExtents; i++)
        if (overlaps(first, n, l.extents[i].first, l.extents[i].nblocks))
            return true;
    return false;
}

bool free_list_push(FreeList *l, uint32_t first, uint32_t n) noexcept
{
    if (n == 0)
        return true;
    if (free_list_overlaps(*l, first, n))
        return false;
    uint32_t joined = l->count; // the extent the blocks joined, if any
    for (uint32_t i = 0; i < l->count && joined == l->count; i++) {
        FreeExtent &e = l->extents[i];
        if (extent_end(e) == first) {
            e.nblocks += n;
            joined = i;
        } else if (static_cast<uint64_t>(first) + n == e.first) {
            e.first = first;
            e.nblocks += n;
            joined = i;
        }
    }
    if (joined == l->count) {
        if (l->count >= kMaxFreeExtents)
            return false;
        l->extents[l->count++] = FreeExtent{first, n};
    } else {
        // The blocks may have closed the gap between two extents: one now.
        for (uint32_t i = 0; i < l->count; i++) {
            FreeExtent &a = l->extents[joined];
            const FreeExtent b = l->extents[i];
            if (i == joined || (extent_end(a) != b.first && extent_end(b) != a.first))
                continue;
            a.first = a.first < b.first ? a.first : b.first;
            a.nblocks += b.nblocks;
            remove_extent(l, i); // moves the last extent, maybe a, into slot i
            break;
        }
    }
    l->check = free_list_check(*l);
    return true;
}

uint32_t free_list_take(FreeList *l, uint32_t n) noexcept
{
    if (n == 0 || l->count > kMaxFreeExtents)
        return 0;
    uint32_t lowest = l->count;
    for (uint32_t i = 0; i < l->count; i++)
        if (l->extents[i].nblocks >= n &&
            (lowest == l->count || l->extents[i].first < l->extents[lowest].first))
            lowest = i;
    if (lowest == l->count)
        return 0;
    FreeExtent &e = l->extents[lowest];
    const uint32_t first = e.first;
    e.first += n;
    e.nblocks -= n;
    if (e.nblocks == 0)
        remove_extent(l, lowest);
    l->check = free_list_check(*l);
    return first;
}

bool free_list_drop(FreeList *l, uint32_t first, uint32_t n) noexcept
{
    for (uint32_t i = 0; i < l->count && i < kMaxFreeExtents; i++)
        if (l->extents[i].first == first && l->extents[i].nblocks == n) {
            remove_extent(l, i);
            l->check = free_list_check(*l);
            return true;
        }
    return false;
}

uint64_t free_list_blocks(const FreeList &l) noexcept
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < l.count && i < kMaxFreeExtents; i++)
        total += l.extents[i].nblocks;
    return total;
}

bool free_extent_ok(const FreeList &l, uint32_t extent, uint32_t nslices, uint32_t nblocks,
                    const SegmentEntry *entries, uint32_t nentries) noexcept
{
    if (extent >= l.count || l.count > kMaxFreeExtents)
        return false;
    const FreeExtent &x = l.extents[extent];
    if (x.nblocks == 0 || x.first <= kMetaBlock || x.first >= nblocks ||
        x.nblocks > nblocks - x.first)
        return false;
    // A segment's extent: from its first slice to its header (the last block).
    for (uint32_t i = 0; i < nentries; i++)
        if (overlaps(x.first, x.nblocks, entries[i].first_slice,
                     slice_page_count(nslices, entries[i].slices_per_page)) ||
            overlaps(x.first, x.nblocks, entries[i].header_block, 1) ||
            (entries[i].header_block > entries[i].first_slice &&
             overlaps(x.first, x.nblocks, entries[i].first_slice,
                      static_cast<uint64_t>(entries[i].header_block) - entries[i].first_slice + 1)))
            return false;
    for (uint32_t i = 0; i < l.count; i++)
        if (i != extent && overlaps(x.first, x.nblocks, l.extents[i].first, l.extents[i].nblocks))
            return false;
    return true;
}

bool segment_encode_tids(const HeapTid *tids, uint32_t nrows, uint8_t *bytes,
                         SegmentHeader *header, uint32_t *page_start,
                         uint16_t *page_used) noexcept
{
    if (nrows == 0 || nrows > kSegmentRows)
        return false;
    const uint32_t ngroups = (nrows + kTidGroupRows - 1) / kTidGroupRows;
    uint32_t page = 0, used = 0; // on the current page
    size_t at = 0;               // in bytes
    page_start[0] = 0;
    for (uint32_t g = 0; g < ngroups; g++) {
        const uint32_t first = g * kTidGroupRows;
        const uint32_t n = nrows - first < kTidGroupRows ? nrows - first : kTidGroupRows;
        const size_t size = tid_group_encode(tids + first, n, bytes + at, tid_group_bound(n));
        if (size == 0)
            return false;
        if (used + size > kTidPagePayload) {
            // Groups never straddle pages: a group is read from one page.
            page_used[page] = static_cast<uint16_t>(used);
            page++;
            if (page >= kMaxTidPages)
                return false; // cannot happen: the bound needs 56
            // Pages start at even offsets of `bytes`: page sums are 16-bit.
            if (used % 2) {
                std::memmove(bytes + at + 1, bytes + at, size);
                bytes[at] = 0;
                at++;
            }
            page_start[page] = static_cast<uint32_t>(at);
            used = 0;
        }
        header->groups[g].page = static_cast<uint16_t>(page);
        header->groups[g].offset = static_cast<uint16_t>(kPageHeaderSize + used);
        used += static_cast<uint32_t>(size);
        at += size;
    }
    page_used[page] = static_cast<uint16_t>(used);
    header->ngroups = static_cast<uint16_t>(ngroups);
    header->ntid_pages = static_cast<uint16_t>(page + 1);
    return true;
}

void tid_page_fill(uint8_t *page, const uint8_t *bytes, uint16_t used, uint16_t ngroups,
                   uint16_t page_index, uint32_t segment_id) noexcept
{
    std::memcpy(page + kPageHeaderSize, bytes, used);
    // pd_lower is the groups' exact end (the last group's bytes end there);
    // the sum takes a pad byte from the hole, zero since PageInit.
    const uint32_t even = (used + 1u) & ~1u;
    set_page(page, kPageTids, kPageHeaderSize + used);
    PageOpaque *op = page_opaque(page);
    op->count = ngroups;
    op->signature_sum = page_sum(page + kPageHeaderSize, even);
    op->tid_sum = page_index;
    set_segment_id(op, segment_id);
}

void segment_header_fill(uint8_t *page, const SegmentHeader &header) noexcept
{
    std::memcpy(page + kPageHeaderSize, &header, sizeof header);
    set_page(page, kPageSegment, kHeaderLower);
    PageOpaque *op = page_opaque(page);
    op->count = header.rows;
    op->signature_sum = page_sum(page + kPageHeaderSize, sizeof header);
    op->tid_sum = 0;
    set_segment_id(op, header.segment_id);
}

void live_page_fill(uint8_t *page, const uint64_t *words, uint16_t rows,
                    uint32_t segment_id) noexcept
{
    std::memcpy(page + kPageHeaderSize, words, kSliceWords * sizeof(uint64_t));
    set_page(page, kPageLive, kSlicePageLower);
    PageOpaque *op = page_opaque(page);
    op->count = rows;
    op->signature_sum = page_sum(page + kPageHeaderSize, kSliceWords * sizeof(uint64_t));
    op->tid_sum = 0;
    set_segment_id(op, segment_id);
}

void key_page_fill(uint8_t *page, const uint32_t *keys, uint16_t rows, uint16_t ncolumns,
                   uint16_t page_index, uint32_t segment_id) noexcept
{
    const uint32_t bytes = uint32_t{rows} * ncolumns * 4;
    std::memcpy(page + kPageHeaderSize, keys, bytes);
    set_page(page, kPageKeys, kPageHeaderSize + bytes);
    PageOpaque *op = page_opaque(page);
    op->count = rows;
    op->signature_sum = page_sum(page + kPageHeaderSize, bytes);
    op->tid_sum = page_index;
    set_segment_id(op, segment_id);
}

bool live_page_clear(uint8_t *page, uint32_t row) noexcept
{
    if (row >= kSegmentRows)
        return false;
    uint8_t *at = page + kPageHeaderSize + (row / 64) * 8;
    uint64_t word;
    std::memcpy(&word, at, sizeof word);
    const uint64_t bit = uint64_t{1} << (row % 64);
    if (!(word & bit))
        return false;
    const uint64_t old = word;
    word &= ~bit;
    std::memcpy(at, &word, sizeof word);
    // Only the 16-bit word holding the bit changed: word (row / 16) of the page.
    const uint32_t shift = (row % 64) / 16 * 16;
    PageOpaque *op = page_opaque(page);
    op->signature_sum = static_cast<uint16_t>(
        op->signature_sum + page_sum_change(row / 16, static_cast<uint16_t>(old >> shift),
                                            static_cast<uint16_t>(word >> shift)));
    return true;
}

void tid_group_span(const SegmentHeader &header, const uint8_t *tid_page, uint32_t g,
                    const uint8_t **bytes, size_t *size) noexcept
{
    const TidGroupRef ref = header.groups[g];
    uint32_t end = read_u16(tid_page + kPdLowerOffset);
    if (g + 1 < header.ngroups && header.groups[g + 1].page == ref.page)
        end = header.groups[g + 1].offset;
    *bytes = tid_page + ref.offset;
    // check_tid_page made sure that end >= offset, short of a pad byte
    *size = end > ref.offset ? end - ref.offset : 0;
}

uint32_t tid_page_group(const SegmentHeader &header, const uint8_t *tid_page, uint32_t g,
                        HeapTid *out) noexcept
{
    if (g >= header.ngroups)
        return 0;
    const uint8_t *bytes;
    size_t size;
    const uint32_t first = g * kTidGroupRows;
    const uint32_t n = header.rows - first < kTidGroupRows ? header.rows - first : kTidGroupRows;
    tid_group_span(header, tid_page, g, &bytes, &size);
    return tid_group_decode(bytes, size, n, out) ? n : 0;
}

PageProblem check_segment_page(const uint8_t *page, uint32_t segment_id, uint16_t rows,
                               uint32_t first_slice, uint32_t nslices, uint16_t slices_per_page,
                               uint32_t ncolumns, uint32_t header_block, uint32_t nblocks,
                               Sums sums) noexcept
{
    PageProblem p = check_fixed(page, kPageSegment, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    if (read_u16(page + kPdLowerOffset) != kHeaderLower)
        return PageProblem::BadBounds;
    const PageOpaque *op = page_opaque(page);
    const SegmentHeader &h = *segment_header(page);
    if (page_segment_id(page) != segment_id || op->count != rows || op->tid_sum != 0)
        return PageProblem::BadSegment;
    if (sums == Sums::Verify && page_sum(page + kPageHeaderSize, sizeof h) != op->signature_sum)
        return PageProblem::BadSegmentSum;
    if (h.segment_id != segment_id || h.rows != rows || h.first_slice != first_slice ||
        h.nslices != nslices || h.slices_per_page != slices_per_page ||
        !slices_per_page_ok(rows, slices_per_page) ||
        (h.key_pages != 0 && h.key_pages != key_page_count(rows, ncolumns)) ||
        h.ngroups != (rows + kTidGroupRows - 1) / kTidGroupRows || h.ntid_pages < 1 ||
        h.ntid_pages > kMaxTidPages || h.live_block == kMetaBlock || h.live_block >= nblocks)
        return PageProblem::BadSegment;
    // One extent: the live page right after the slices, then the TID pages.
    if (h.live_block !=
        static_cast<uint64_t>(first_slice) + slice_page_count(nslices, slices_per_page))
        return PageProblem::BadSegment;
    for (uint32_t i = 0; i < h.ntid_pages; i++)
        if (h.tid_blocks[i] != h.live_block + 1 + i || h.tid_blocks[i] >= nblocks)
            return PageProblem::BadSegment;
    // The header right after the TID pages and the key pages (if any): a
    // gap would be blocks the sweep leaves unmarked inside the segment.
    if (uint64_t{h.live_block} + 1 + h.ntid_pages + h.key_pages != header_block)
        return PageProblem::BadSegment;
    if (sums == Sums::Trust)
        return PageProblem::None;
    // Groups in order: page by page, offsets rising on each page.
    for (uint32_t g = 0; g < h.ngroups; g++) {
        const TidGroupRef r = h.groups[g];
        if (r.page >= h.ntid_pages || r.offset < kPageHeaderSize || r.offset >= kSpecialOffset)
            return PageProblem::BadSegment;
        if (g > 0) {
            const TidGroupRef prev = h.groups[g - 1];
            if (r.page < prev.page || (r.page == prev.page && r.offset <= prev.offset) ||
                r.page > prev.page + 1)
                return PageProblem::BadSegment;
        } else if (r.page != 0 || r.offset != kPageHeaderSize) {
            return PageProblem::BadSegment;
        }
    }
    if (h.groups[h.ngroups - 1].page + 1u != h.ntid_pages)
        return PageProblem::BadSegment;
    return PageProblem::None;
}

PageProblem check_tid_page(const uint8_t *page, const SegmentHeader &header,
                           uint16_t page_index, Sums sums) noexcept
{
    PageProblem p = check_fixed(page, kPageTids, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    const uint32_t lower = read_u16(page + kPdLowerOffset);
    if (page_segment_id(page) != header.segment_id || op->tid_sum != page_index)
        return PageProblem::BadTidPage;
    const uint32_t even = (lower - kPageHeaderSize + 1u) & ~1u;
    if (sums == Sums::Verify && page_sum(page + kPageHeaderSize, even) != op->signature_sum)
        return PageProblem::BadTidBytes;
    // Trusted: this page, as it is, was checked against this segment's
    // header before (whose groups never change), so the walk over up to
    // 1,016 groups below answers as it did then: a tenth of an IN list's
    // index time went to it, once per TID page a segment visits.
    if (sums == Sums::Trust)
        return PageProblem::None;
    // The header's groups on this page start within its bytes.
    uint32_t groups = 0;
    for (uint32_t g = 0; g < header.ngroups; g++)
        if (header.groups[g].page == page_index) {
            if (header.groups[g].offset >= lower)
                return PageProblem::BadTidPage;
            groups++;
        }
    if (groups != op->count)
        return PageProblem::BadTidPage;
    return PageProblem::None;
}

PageProblem check_key_page(const uint8_t *page, uint32_t segment_id, uint16_t rows,
                           uint16_t ncolumns, uint16_t page_index, Sums sums) noexcept
{
    PageProblem p = check_fixed(page, kPageKeys, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    const uint32_t per_page = ncolumns == 0 ? 0 : key_rows_per_page(ncolumns);
    const uint32_t first = uint32_t{page_index} * per_page;
    if (per_page == 0 || first >= rows || op->count != std::min(per_page, rows - first) ||
        op->tid_sum != page_index || page_segment_id(page) != segment_id)
        return PageProblem::BadKeyPage;
    const uint32_t bytes = uint32_t{op->count} * ncolumns * 4;
    if (read_u16(page + kPdLowerOffset) != kPageHeaderSize + bytes)
        return PageProblem::BadKeyPage;
    if (sums == Sums::Verify && page_sum(page + kPageHeaderSize, bytes) != op->signature_sum)
        return PageProblem::BadKeyBytes;
    return PageProblem::None;
}

PageProblem check_live_page(const uint8_t *page, uint16_t rows, uint32_t segment_id,
                            Sums sums) noexcept
{
    PageProblem p = check_fixed(page, kPageLive, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    if (read_u16(page + kPdLowerOffset) != kSlicePageLower || op->count != rows ||
        op->tid_sum != 0 || page_segment_id(page) != segment_id)
        return PageProblem::BadLive;
    if (sums == Sums::Verify &&
        page_sum(page + kPageHeaderSize, kSliceWords * sizeof(uint64_t)) != op->signature_sum)
        return PageProblem::BadLiveBits;
    return PageProblem::None;
}

uint32_t segment_extents(const SegmentHeader &h, uint32_t header_block, uint32_t group_blocks,
                         FreeExtent *out) noexcept
{
    if (h.ntid_pages > kMaxTidPages || h.key_pages > kMaxKeyPages || h.nslices == 0 ||
        !slices_per_page_ok(h.rows, h.slices_per_page) ||
        uint64_t{h.live_block} + 1 + h.ntid_pages + h.key_pages > UINT32_MAX)
        return 0;
    // The slices as one extent, the other blocks one each, in block order.
    uint32_t n = 0;
    auto insert = [&](uint32_t first, uint32_t nblocks) {
        if (n == kMaxSegmentExtents) // cannot happen (counted above); never past out[]
            return;
        uint32_t at = n++;
        for (; at > 0 && out[at - 1].first > first; at--)
            out[at] = out[at - 1];
        out[at] = FreeExtent{first, nblocks};
    };
    insert(h.first_slice, slice_page_count(h.nslices, h.slices_per_page));
    insert(h.live_block, 1);
    for (uint32_t p = 0; p < h.ntid_pages; p++)
        insert(h.tid_blocks[p], 1);
    if (h.key_pages > 0)
        insert(h.live_block + 1 + h.ntid_pages, h.key_pages);
    insert(header_block, 1);
    if (group_blocks > 0) {
        if (uint64_t{header_block} + 1 + group_blocks > UINT32_MAX)
            return 0;
        insert(header_block + 1, group_blocks);
    }
    // Extents that touch become one; blocks named twice are damage.
    uint32_t kept = 0;
    for (uint32_t i = 1; i < n; i++) {
        const uint64_t end = static_cast<uint64_t>(out[kept].first) + out[kept].nblocks;
        if (out[i].first < end)
            return 0;
        if (end == out[i].first)
            out[kept].nblocks += out[i].nblocks;
        else
            out[++kept] = out[i];
    }
    return kept + 1;
}

uint32_t segment_page_owner(const uint8_t *page) noexcept
{
    const PageOpaque *op = page_opaque(page);
    if (read_u16(page + kPdSpecialOffset) != kSpecialOffset || op->page_id != kPageId ||
        op->format != kFormatSliced)
        return 0;
    switch (op->flags) {
    case kPageSlice:
    case kPageSegment:
    case kPageTids:
    case kPageLive:
    case kPageKeys:
        return page_segment_id(page);
    default:
        return 0;
    }
}

void listed_page_fill(uint8_t *page) noexcept
{
    set_page(page, kPageListed, kPageHeaderSize);
    page_opaque(page)->format = kFormatRowWise;
}

PageProblem check_listed_page(const uint8_t *page) noexcept
{
    return check_fixed(page, kPageListed, kFormatRowWise);
}

void free_page_fill(uint8_t *page) noexcept
{
    set_page(page, kPageFree, kPageHeaderSize);
    page_opaque(page)->format = kFormatRowWise;
}

PageProblem check_free_page(const uint8_t *page) noexcept
{
    return check_fixed(page, kPageFree, kFormatRowWise);
}

} // namespace bloomidx
