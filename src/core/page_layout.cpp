// The format helpers page_layout.hpp declares that are not a segment's
// or a filter group's (segment_pages.cpp, filter_pages.cpp): pages' sums
// and bounds, the checks of the metapage, pending and slice pages, and
// slice pages filled.
#include "page_layout.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hash.hpp"
#include "signature.hpp"

#include "core_guard.hpp"

namespace bloomidx {

namespace {

// Adds (mod 2^16) to the two entry sums of a data page.
inline void add_to_sums(uint8_t *page, uint32_t signatures, uint32_t tids) noexcept
{
    PageOpaque *op = page_opaque(page);
    op->signature_sum = static_cast<uint16_t>(op->signature_sum + signatures);
    op->tid_sum = static_cast<uint16_t>(op->tid_sum + tids);
}

inline void set_count(uint8_t *page, const RowPageGeometry &g, uint32_t count) noexcept
{
    page_opaque(page)->count = static_cast<uint16_t>(count);
    write_u16(page + kPdLowerOffset, row_page_lower(g, count));
    write_u16(page + kPdUpperOffset, row_page_upper(g, count));
}

PageProblem check_bounds(const uint8_t *page) noexcept
{
    uint16_t lower = read_u16(page + kPdLowerOffset);
    uint16_t upper = read_u16(page + kPdUpperOffset);
    uint16_t special = read_u16(page + kPdSpecialOffset);
    if (special != kSpecialOffset)
        return PageProblem::NotBloomidx;
    if (lower < kPageHeaderSize || lower > upper || upper > special)
        return PageProblem::BadBounds;
    if (page_opaque(page)->page_id != kPageId)
        return PageProblem::NotBloomidx;
    return PageProblem::None;
}

} // namespace

uint32_t meta_options_check(const MetaPageData *meta) noexcept
{
    MetaPageData copy;
    std::memcpy(&copy, meta, sizeof copy);
    copy.unused_block = 0; // format 5's insert hint, which changed as the index grew
    copy.options_check = 0;
    return static_cast<uint32_t>(hash_bytes(&copy, sizeof copy, kMetaMagic));
}

uint32_t segment_entry_check(const SegmentEntry &e) noexcept
{
    SegmentEntry copy;
    std::memcpy(&copy, &e, sizeof copy);
    copy.check = 0;
    return static_cast<uint32_t>(hash_bytes(&copy, sizeof copy, kMetaMagic ^ 0x5E6));
}

bool segment_entry_ok(const SegmentEntry &e, uint32_t nslices, uint32_t nblocks) noexcept
{
    const uint32_t pages = slice_page_count(nslices, e.slices_per_page);
    return e.check == segment_entry_check(e) && e.segment_id != 0 && e.rows >= 1 &&
           e.rows <= kSegmentRows && e.live_rows <= e.rows &&
           slices_per_page_ok(e.rows, e.slices_per_page) &&
           e.header_block != kMetaBlock && e.header_block < nblocks &&
           e.first_slice != kMetaBlock && e.first_slice < nblocks &&
           pages <= nblocks - e.first_slice &&
           // One extent: slices, live page, 1..kMaxTidPages TID pages, key pages, header.
           e.header_block >= static_cast<uint64_t>(e.first_slice) + pages + 2 &&
           e.header_block <= static_cast<uint64_t>(e.first_slice) + pages + 1 + kMaxTidPages +
                                 (e.rows <= kKeyedRowsMax ? kMaxKeyPages : 0) &&
           (e.filter_block == 0 ? e.filter_offset == 0 && e.filter_group == 0
                                : e.filter_block != kMetaBlock && e.filter_block < nblocks &&
                                      e.filter_offset < kGroupSlots && e.filter_group != 0);
}

void meta_fill(MetaPageData *meta, uint16_t signature_bits, uint16_t ncolumns,
               const uint16_t *column_bits, const uint8_t *column_hashing,
               bool filter_keys) noexcept
{
    std::memset(meta, 0, sizeof *meta);
    meta->magic = kMetaMagic;
    meta->version = kMetaVersion;
    meta->format = kFormatRowWise;
    meta->hash_version = kHashXxh3V2;
    meta->signature_bits = signature_bits;
    meta->signature_bytes = static_cast<uint16_t>(signature_bytes(signature_bits));
    meta->ncolumns = ncolumns;
    meta->filter_keys = filter_keys ? 1 : 0;
    meta->capacity = static_cast<uint16_t>(meta_row_geometry(*meta).capacity);
    meta->unused_block = 0;
    for (uint16_t i = 0; i < ncolumns; i++) {
        meta->column_bits[i] = column_bits[i];
        meta->column_hashing[i] = column_hashing[i];
    }
    meta->options_check = meta_options_check(meta);
}

uint16_t entry_sum(const uint8_t *bytes, uint32_t len) noexcept
{
    uint32_t i = 0;
    uint64_t total = 0;
#if defined(__SSE2__)
    // Eight 16-bit lanes wrap mod 2^16 as the sum does: 16 bytes an add.
    __m128i a = _mm_setzero_si128();
    __m128i b = _mm_setzero_si128();
    for (; i + 32 <= len; i += 32) {
        a = _mm_add_epi16(a, _mm_loadu_si128(reinterpret_cast<const __m128i *>(bytes + i)));
        b = _mm_add_epi16(b, _mm_loadu_si128(reinterpret_cast<const __m128i *>(bytes + i + 16)));
    }
    uint16_t lanes[8];
    _mm_storeu_si128(reinterpret_cast<__m128i *>(lanes), _mm_add_epi16(a, b));
    for (uint16_t lane : lanes)
        total += lane;
#endif
    for (; i + 8 <= len; i += 8) {
        uint64_t w = load_u64(bytes + i);
        total += (w & 0xFFFF) + ((w >> 16) & 0xFFFF) + ((w >> 32) & 0xFFFF) + (w >> 48);
    }
    for (; i + 2 <= len; i += 2)
        total += read_u16(bytes + i);
    return static_cast<uint16_t>(total);
}

uint16_t page_sum(const uint8_t *bytes, uint32_t len) noexcept
{
    uint32_t i = 0;
    uint64_t total = 0;
#if defined(__SSE2__)
    // Lane k of the i-th 16 bytes holds word 8i + k, weighed 2(8i + k) + 1;
    // products and sums wrap mod 2^16 as the sum does.
    __m128i acc = _mm_setzero_si128();
    __m128i weights = _mm_setr_epi16(1, 3, 5, 7, 9, 11, 13, 15);
    const __m128i step = _mm_set1_epi16(16);
    for (; i + 16 <= len; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(bytes + i));
        acc = _mm_add_epi16(acc, _mm_mullo_epi16(v, weights));
        weights = _mm_add_epi16(weights, step);
    }
    uint16_t lanes[8];
    _mm_storeu_si128(reinterpret_cast<__m128i *>(lanes), acc);
    for (uint16_t lane : lanes)
        total += lane;
#endif
    for (; i + 2 <= len; i += 2)
        total += static_cast<uint64_t>(read_u16(bytes + i)) * (i + 1); // word i / 2: weight i + 1
    return static_cast<uint16_t>(total);
}

uint16_t page_sum_change(uint32_t word, uint16_t before, uint16_t after) noexcept
{
    return static_cast<uint16_t>((2u * word + 1u) * static_cast<uint32_t>(after - before));
}

uint32_t row_page_stored_sums(const uint8_t *page) noexcept
{
    const PageOpaque *op = page_opaque(page);
    return op->signature_sum | (static_cast<uint32_t>(op->tid_sum) << 16);
}

void row_page_append(uint8_t *page, const RowPageGeometry &g, const uint8_t *signature,
                     const uint8_t *tail) noexcept
{
    uint32_t count = page_opaque(page)->count;
    uint8_t *slot = row_signature(page, g, count);
    if (signature != slot) // a build makes the signature in place
        std::memcpy(slot, signature, g.signature_bytes);
    std::memcpy(row_tid(page, g, count), tail, g.tail_bytes);
    add_to_sums(page, entry_sum(slot, g.signature_bytes), entry_sum(tail, g.tail_bytes));
    set_count(page, g, count + 1);
}

void row_page_append_ranges(const RowPageGeometry &g, uint32_t count,
                            PageRange out[kAppendRanges]) noexcept
{
    out[0] = PageRange{static_cast<uint16_t>(kPdLowerOffset), 2 * sizeof(uint16_t)};
    out[1] = PageRange{static_cast<uint16_t>(row_page_lower(g, count)),
                       static_cast<uint16_t>(g.signature_bytes)};
    out[2] = PageRange{static_cast<uint16_t>(row_page_upper(g, count + 1)),
                       static_cast<uint16_t>(g.tail_bytes)};
    out[3] = PageRange{static_cast<uint16_t>(kSpecialOffset), sizeof(PageOpaque)};
}

void row_page_move(uint8_t *page, const RowPageGeometry &g, uint32_t from, uint32_t to) noexcept
{
    // Slot `to` now holds a copy of entry `from`: the sums count it twice
    // until the truncation that ends a compaction drops the tail.
    add_to_sums(page,
                0x10000u + entry_sum(row_signature(page, g, from), g.signature_bytes) -
                    entry_sum(row_signature(page, g, to), g.signature_bytes),
                0x10000u + entry_sum(row_tid(page, g, from), g.tail_bytes) -
                    entry_sum(row_tid(page, g, to), g.tail_bytes));
    std::memcpy(row_signature(page, g, to), row_signature(page, g, from), g.signature_bytes);
    std::memcpy(row_tid(page, g, to), row_tid(page, g, from), g.tail_bytes);
}

void row_page_truncate(uint8_t *page, const RowPageGeometry &g, uint32_t count) noexcept
{
    uint32_t old = page_opaque(page)->count;
    if (count < old) {
        uint8_t *signatures = row_signature(page, g, count);
        uint8_t *tids = row_tid(page, g, old - 1);
        uint32_t signature_len = (old - count) * g.signature_bytes;
        uint32_t tid_len = (old - count) * g.tail_bytes;
        add_to_sums(page, 0x10000u - entry_sum(signatures, signature_len),
                    0x10000u - entry_sum(tids, tid_len));
        std::memset(signatures, 0, signature_len);
        std::memset(tids, 0, tid_len);
    }
    set_count(page, g, count);
}

PageProblem check_row_page_signatures(const uint8_t *page, const RowPageGeometry &g) noexcept
{
    uint32_t count = page_opaque(page)->count;
    if (entry_sum(page + kPageHeaderSize, count * g.signature_bytes) !=
        (row_page_stored_sums(page) & 0xFFFFu))
        return PageProblem::BadSignatures;
    return PageProblem::None;
}

PageProblem check_row_page_tids(const uint8_t *page, const RowPageGeometry &g) noexcept
{
    uint32_t count = page_opaque(page)->count;
    if (entry_sum(page + row_page_upper(g, count), count * g.tail_bytes) !=
        (row_page_stored_sums(page) >> 16))
        return PageProblem::BadTids;
    return PageProblem::None;
}

namespace {

// A page of the given kind and storage format, within sound bounds.
PageProblem check_kind(const uint8_t *page, uint16_t kind, uint16_t format) noexcept
{
    PageProblem p = check_bounds(page);
    if (p != PageProblem::None)
        return p;
    if (page_opaque(page)->flags != kind)
        return PageProblem::WrongKind;
    if (page_opaque(page)->format != format)
        return PageProblem::BadFormat;
    return PageProblem::None;
}

} // namespace

void slice_page_fill(uint8_t *page, const uint64_t *words, uint16_t rows, uint16_t slice,
                     uint32_t segment_id) noexcept
{
    std::memcpy(page + kPageHeaderSize, words, kSliceWords * sizeof(uint64_t));
    write_u16(page + kPdLowerOffset, static_cast<uint16_t>(kSlicePageLower));
    write_u16(page + kPdUpperOffset, static_cast<uint16_t>(kSpecialOffset));
    PageOpaque *op = page_opaque(page);
    op->count = rows;
    op->flags = kPageSlice;
    op->format = kFormatSliced;
    op->signature_sum = page_sum(page + kPageHeaderSize, kSliceWords * sizeof(uint64_t));
    op->tid_sum = slice;
    op->reserved[0] = static_cast<uint16_t>(segment_id);
    op->reserved[1] = static_cast<uint16_t>(segment_id >> 16);
    op->page_id = kPageId;
}

PageProblem check_slice_page(const uint8_t *page, uint16_t rows, uint16_t slice,
                             uint32_t segment_id, Sums sums) noexcept
{
    PageProblem p = check_kind(page, kPageSlice, kFormatSliced);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    if (read_u16(page + kPdLowerOffset) != kSlicePageLower ||
        read_u16(page + kPdUpperOffset) != kSpecialOffset)
        return PageProblem::BadBounds;
    if (op->count != rows || rows > kSegmentRows || op->tid_sum != slice ||
        op->reserved[0] != static_cast<uint16_t>(segment_id) ||
        op->reserved[1] != static_cast<uint16_t>(segment_id >> 16))
        return PageProblem::BadSlice;
    if (sums == Sums::Verify &&
        page_sum(page + kPageHeaderSize, kSliceWords * sizeof(uint64_t)) != op->signature_sum)
        return PageProblem::BadSliceBits;
    return PageProblem::None;
}

PageProblem check_row_page(const uint8_t *page, const RowPageGeometry &g,
                           EntryChecks entries) noexcept
{
    PageProblem p = check_kind(page, page_opaque(page)->flags == kPageSealing ? kPageSealing
                                                                                : kPageData,
                               kFormatRowWise);
    if (p != PageProblem::None)
        return p;
    const PageOpaque *op = page_opaque(page);
    if (op->count > g.capacity)
        return PageProblem::BadCount;
    if (read_u16(page + kPdLowerOffset) != row_page_lower(g, op->count) ||
        read_u16(page + kPdUpperOffset) != row_page_upper(g, op->count))
        return PageProblem::BadBounds;
    if (entries == EntryChecks::None)
        return PageProblem::None;
    p = check_row_page_signatures(page, g);
    if (p != PageProblem::None || entries == EntryChecks::Signatures)
        return p;
    return check_row_page_tids(page, g);
}

PageProblem check_meta_page(const uint8_t *page) noexcept
{
    PageProblem p = check_bounds(page);
    if (p != PageProblem::None)
        return p;
    if (page_opaque(page)->flags != kPageMeta)
        return PageProblem::WrongKind;
    const MetaPageData *meta = meta_data(page);
    if (meta->magic != kMetaMagic)
        return PageProblem::BadMagic;
    if (meta->version < kMetaVersionOldest || meta->version > kMetaVersion)
        return PageProblem::BadVersion;
    // Each format version fixes its hash version: another one is damage.
    if (meta->hash_version != kHashXxh3V2)
        return PageProblem::BadOptions;
    if (meta->format != kFormatRowWise)
        return PageProblem::BadFormat;
    if (meta->signature_bits < 1 || meta->signature_bits > kMaxSignatureBits ||
        meta->signature_bytes != signature_bytes(meta->signature_bits) ||
        meta->ncolumns < 1 || meta->ncolumns > kMaxColumns ||
        meta->filter_keys > 1 || meta->capacity != meta_row_geometry(*meta).capacity)
        return PageProblem::BadOptions;
    for (int i = 0; i < meta->ncolumns; i++)
        if (meta->column_bits[i] < 1 || meta->column_bits[i] > meta->signature_bits ||
            (meta->column_hashing[i] != kHashByValue &&
             meta->column_hashing[i] != kHashByFunction))
            return PageProblem::BadOptions;
    if (meta->options_check != meta_options_check(meta))
        return PageProblem::BadOptions;
    const DirectoryHeader *d = directory_header(page);
    if (read_u16(page + kPdLowerOffset) != kMetaPageLower || d->check != directory_check(*d) ||
        d->nsegments > kMaxSegments || d->next_segment_id == 0 ||
        d->next_segment_id > kFirstGroupId || d->next_group_id < kFirstGroupId || d->reserved != 0 ||
        (d->pending_head == kMetaBlock) != (d->pending_tail == kMetaBlock) ||
        (d->pending_head == kMetaBlock) != (d->pending_pages == 0) ||
        d->generation == 0)
        return PageProblem::BadDirectory;
    const DirectoryPageList *pages = directory_page_list(page);
    if (pages->count != directory_pages(d->nsegments) || pages->reserved != 0 ||
        pages->check != directory_page_list_check(*pages))
        return PageProblem::BadDirectory;
    for (uint32_t i = 0; i < kMaxDirectoryPages; i++)
        if ((pages->blocks[i] == kMetaBlock) != (i >= pages->count))
            return PageProblem::BadDirectory;
    const FreeList *list = free_list(page);
    if (list->count > kMaxFreeExtents || list->reserved != 0 || list->check != free_list_check(*list))
        return PageProblem::BadDirectory;
    const PendingFilters *pf = pending_filters(page);
    if (pf->reserved != 0 || pf->check != pending_filters_check(*pf) ||
        (pf->first_group == kMetaBlock) != (pf->first_group_id == 0) ||
        (pf->first_group != kMetaBlock &&
         (pf->first_group_id < kFirstGroupId || pf->first_group_id >= d->next_group_id)))
        return PageProblem::BadDirectory;
    return PageProblem::None;
}

const char *page_problem_text(PageProblem problem) noexcept
{
    switch (problem) {
    case PageProblem::None: return "no problem";
    case PageProblem::NotBloomidx: return "not a bloomidx page";
    case PageProblem::WrongKind: return "unexpected page kind";
    case PageProblem::BadFormat: return "unknown storage format";
    case PageProblem::BadCount: return "entry count exceeds page capacity";
    case PageProblem::BadBounds: return "page header bounds out of place";
    case PageProblem::BadMagic: return "bad metapage magic number";
    case PageProblem::BadVersion: return "unsupported metapage version";
    case PageProblem::BadOptions: return "metapage options out of range";
    case PageProblem::BadSignatures: return "signatures do not match the page's sum";
    case PageProblem::BadTids: return "heap TIDs do not match the page's sum";
    case PageProblem::BadSlice: return "slice page of another segment, slice or row count";
    case PageProblem::BadSliceBits: return "slice bits do not match the page's sum";
    case PageProblem::BadSegment: return "segment header of another segment, or its fields out of range";
    case PageProblem::BadSegmentSum: return "segment header does not match its sum";
    case PageProblem::BadTidPage: return "TID page of another segment, or its groups out of place";
    case PageProblem::BadTidBytes: return "TID bytes do not match the page's sum";
    case PageProblem::BadDirectory: return "segment directory or pending list damaged";
    case PageProblem::BadFilter: return "filter group page out of place";
    case PageProblem::BadFilterBits: return "segment filter bits damaged";
    case PageProblem::BadLive: return "live-bits page of another segment or row count";
    case PageProblem::BadLiveBits: return "live bits do not match the page's sum";
    case PageProblem::BadKeyPage: return "key page of another segment or row count";
    case PageProblem::BadKeyBytes: return "filter keys do not match the page's sum";
    }
    return "unknown problem";
}

} // namespace bloomidx
