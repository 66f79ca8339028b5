// The on-disk format of a bloomidx index: every byte of every page is
// described here, and only here.
//
// Block 0 is the metapage; every other block is a data page.  All pages
// are standard PostgreSQL pages (24-byte header, special space at the end)
// so the buffer manager, checksums and Generic WAL handle them.  The glue
// static_asserts that the PostgreSQL constants agree with these.
//
// Row-wise data page (format 1), for signatures of S bytes and n entries:
//
//   [page header, 24 B][sig 0][sig 1]...[sig n-1][hole][tid n-1]...[tid 1][tid 0][special, 16 B]
//                                                ^pd_lower  ^pd_upper
//
// Signatures are stored back to back, apart from the 6-byte heap TIDs, so
// a scan tests them in one tight loop (signature.hpp).  Signatures grow up
// from the header and TIDs down from the special space, like a heap page's
// line pointers and tuples, so the free space is one hole that pd_lower
// and pd_upper bound exactly: Generic WAL neither diffs nor logs it, and a
// full-page image leaves it out.  C, the capacity, is fixed by S: as many
// (S + 6)-byte entries as fit in the 8,152 payload bytes, contrib/bloom's
// tuples per page or one fewer.  Vacuum compacts entries [0, n).
//
// Slice page (format 2, for the bit-sliced segments of src/segments.md;
// not yet written by the index): bit j of a segment's rows,
//
//   [page header, 24 B][kSliceWords words: row r at word r / 64, bit r % 64][hole, 24 B][special, 16 B]
//                                                                          ^pd_lower  ^pd_upper
//
// In the special space: count = the segment's rows, flags = kPageSlice,
// format = kFormatSliced, signature_sum = the entry sum of the words,
// tid_sum = j, reserved = the segment's id (low half first).  The sum is
// checked whenever a scan reads the page: a cleared bit would otherwise
// lose a row.
//
// Entry sums: with data checksums off (initdb's default) nothing else
// would notice a flipped bit in a signature, and a cleared bit loses a row
// silently.  So a data page keeps, in its special space, the sum mod 2^16
// of its signatures taken as 16-bit words and the same sum of its TIDs.
// Every entry is a whole number of 16-bit words (signatures have an even
// length, TIDs are 6 bytes, both start at even offsets), so each change
// below updates the sums by the entries it adds or drops.  Any flipped
// bit, any damage within one 16-bit word, and all but about 1 in 65,536
// other damage changes a sum; every reader tests them (check_row_page).
// (Format 4 kept them in pd_prune_xid, a heap field that page_header()
// shows as an XID and that PostgreSQL may one day use for every page.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "slices.hpp"

namespace bloomidx {

constexpr uint32_t kBlockSize = 8192;
constexpr uint32_t kPageHeaderSize = 24; // SizeOfPageHeaderData
constexpr uint32_t kTidSize = 6;         // sizeof(ItemPointerData)
constexpr uint32_t kMetaBlock = 0;

// Offsets of PageHeaderData fields the core reads (checked by the glue).
constexpr uint32_t kPdLowerOffset = 12;
constexpr uint32_t kPdUpperOffset = 14;
constexpr uint32_t kPdSpecialOffset = 16;

// Special space of every bloomidx page: 16 bytes (contrib/bloom's is 8;
// the entry sums cost a data page at most one entry, 509 against 510 at 80
// bits), with the page id last, where pg_filedump and other tools look.
struct PageOpaque {
    uint16_t count;          // data page: live entries; metapage: 0
    uint16_t flags;          // kPageMeta or kPageData
    uint16_t format;         // storage format of a data page (kFormatRowWise)
    uint16_t signature_sum;  // data page: entry sum of the signatures
    uint16_t tid_sum;        // data page: entry sum of the heap TIDs
    uint16_t reserved[2];    // zero
    uint16_t page_id;        // kPageId: tells a bloomidx page from any other
};
static_assert(sizeof(PageOpaque) == 16, "special space is 16 bytes");

constexpr uint16_t kPageMeta = 1;
constexpr uint16_t kPageData = 2;
constexpr uint16_t kPageSlice = 3;
constexpr uint16_t kPageId = 0xB1D5;
constexpr uint32_t kSpecialOffset = kBlockSize - sizeof(PageOpaque);
constexpr uint32_t kPayloadBytes = kSpecialOffset - kPageHeaderSize; // 8,152

// Metapage, right after the page header of block 0.
constexpr uint32_t kMetaMagic = 0x626C6478; // "bldx"
constexpr uint16_t kMetaVersion = 5;        // bump on any change to this file that
                                            // indexes see (slice pages: 6, when written)
constexpr uint16_t kFormatRowWise = 1;      // the only storage format indexes use so far
constexpr uint16_t kFormatSliced = 2;       // slice pages (segments), coming
constexpr uint16_t kHashXxh3V2 = 2;         // hash.cpp + positions.cpp + the glue's
                                            // value hashing (state.cpp), version 2

// How a column's values became hashes (MetaPageData::column_hashing),
// frozen at build because an operator family can gain members later.
constexpr uint8_t kHashByValue = 1;    // the value's bytes (byte equality types)
constexpr uint8_t kHashByFunction = 2; // the family's hash function for its type

struct MetaPageData {
    uint32_t magic;           // kMetaMagic
    uint16_t version;         // kMetaVersion
    uint16_t format;          // storage format of the data pages
    uint16_t hash_version;    // how values become bit positions
    uint16_t signature_bits;  // m: positions fall in [0, m)
    uint16_t signature_bytes; // stored bytes per signature
    uint16_t ncolumns;        // indexed columns
    uint16_t capacity;        // entries per data page
    uint16_t reserved;
    uint32_t insert_block;    // data page inserts try first (a hint)
    uint16_t column_bits[32]; // bits each column's value sets
    uint8_t column_hashing[32]; // kHashByValue or kHashByFunction
    uint32_t options_check;   // hash of every field above but insert_block
};
static_assert(sizeof(MetaPageData) == 124, "metapage layout is fixed");

// The check of a metapage's frozen fields.  A damaged bit count that is
// still in range would otherwise make every scan compute other positions
// and miss rows silently; with it, the damage is reported instead.
uint32_t meta_options_check(const MetaPageData *meta) noexcept;

struct RowPageGeometry {
    uint32_t signature_bytes;
    uint32_t capacity;
};

constexpr RowPageGeometry row_page_geometry(uint32_t signature_bytes)
{
    return RowPageGeometry{signature_bytes, kPayloadBytes / (signature_bytes + kTidSize)};
}

// More entries than any data page holds (the shortest signature, 2 bytes,
// gives the most): the size of per-page arrays in scans and vacuum.
constexpr uint32_t kMaxPageEntries = kPayloadBytes / (2 + kTidSize);

// Where the hole starts and ends on a data page with `count` entries.
constexpr uint32_t row_page_lower(const RowPageGeometry &g, uint32_t count)
{
    return kPageHeaderSize + count * g.signature_bytes;
}
constexpr uint32_t row_page_upper(uint32_t count)
{
    return kSpecialOffset - count * kTidSize;
}

inline PageOpaque *page_opaque(uint8_t *page) noexcept
{
    return reinterpret_cast<PageOpaque *>(page + kSpecialOffset);
}
inline const PageOpaque *page_opaque(const uint8_t *page) noexcept
{
    return reinterpret_cast<const PageOpaque *>(page + kSpecialOffset);
}
inline MetaPageData *meta_data(uint8_t *page) noexcept
{
    return reinterpret_cast<MetaPageData *>(page + kPageHeaderSize);
}
inline const MetaPageData *meta_data(const uint8_t *page) noexcept
{
    return reinterpret_cast<const MetaPageData *>(page + kPageHeaderSize);
}
inline uint8_t *row_signature(uint8_t *page, const RowPageGeometry &g, uint32_t i) noexcept
{
    return page + kPageHeaderSize + i * g.signature_bytes;
}
inline const uint8_t *row_signature(const uint8_t *page, const RowPageGeometry &g,
                                    uint32_t i) noexcept
{
    return page + kPageHeaderSize + i * g.signature_bytes;
}
inline const uint8_t *row_signatures(const uint8_t *page) noexcept
{
    return page + kPageHeaderSize;
}
inline uint8_t *row_tid(uint8_t *page, const RowPageGeometry &, uint32_t i) noexcept
{
    return page + row_page_upper(i + 1);
}
inline const uint8_t *row_tid(const uint8_t *page, const RowPageGeometry &, uint32_t i) noexcept
{
    return page + row_page_upper(i + 1);
}

// Asks the CPU to start loading a data page's signatures (and its special
// space, which holds the count) while another page is tested.  The
// hardware prefetcher stops at every 4 kB boundary, so a scan that waits
// for each page's first lines spends a quarter of its time stalled.  Only
// a hint: it reads nothing, so a page changing meanwhile is harmless.
inline void prefetch_row_page(const uint8_t *page, const RowPageGeometry &g) noexcept
{
    const uint32_t end = kPageHeaderSize + g.capacity * g.signature_bytes;
    for (uint32_t off = 0; off < end; off += 64)
        __builtin_prefetch(page + off);
    __builtin_prefetch(page + kSpecialOffset);
}

// Free bytes a data page reports to the free space map.
inline uint32_t row_page_free_bytes(const RowPageGeometry &g, uint32_t count) noexcept
{
    return (g.capacity - count) * (g.signature_bytes + kTidSize);
}

// Fills in a fresh metapage's contents (the page itself is initialised
// by the glue, which owns PageInit).
void meta_fill(MetaPageData *meta, uint16_t signature_bits, uint16_t ncolumns,
               const uint16_t *column_bits, const uint8_t *column_hashing) noexcept;

// The sum mod 2^16 of `len` bytes (even) taken as 16-bit words.
uint16_t entry_sum(const uint8_t *bytes, uint32_t len) noexcept;

// The entry sums a data page holds: signatures in the low half, TIDs in
// the high half.
uint32_t row_page_stored_sums(const uint8_t *page) noexcept;

// Appends one entry to a row-wise data page with room for it.
void row_page_append(uint8_t *page, const RowPageGeometry &g, const uint8_t *signature,
                     const uint8_t *tid) noexcept;

// Moves entry `from` to slot `to` (to < from), as vacuum compacts a page.
void row_page_move(uint8_t *page, const RowPageGeometry &g, uint32_t from, uint32_t to) noexcept;

// Keeps the first `count` entries: sets the count and the hole, and zeroes
// what the entries past it used.
void row_page_truncate(uint8_t *page, const RowPageGeometry &g, uint32_t count) noexcept;

// A segment directory entry (src/segments.md), 32 bytes, 250 of them
// inline in the metapage once segments are written (format version 6).
// The check covers every other field, so a damaged entry, which would
// send a scan to the wrong blocks or drop a segment's rows, is an error.
struct SegmentEntry {
    uint32_t segment_id;    // nonzero; also on each of the segment's pages
    uint32_t header_block;  // the segment header page
    uint32_t first_slice;   // slice j at block first_slice + j
    uint16_t rows;          // 1..kSegmentRows
    uint16_t live_rows;     // rows VACUUM has not cleared
    uint32_t filter_block;  // issue 12: where the segment's filters are (0: none)
    uint16_t filter_offset; // ... and at which byte
    uint16_t flags;         // 0 so far
    uint32_t reserved;      // 0
    uint32_t check;         // segment_entry_check of the fields above
};
static_assert(sizeof(SegmentEntry) == 32, "directory entries are 32 bytes");

uint32_t segment_entry_check(const SegmentEntry &e) noexcept;
// Whether an entry is sound for an index of `nblocks` blocks whose
// signatures have `nslices` bits.
bool segment_entry_ok(const SegmentEntry &e, uint32_t nslices, uint32_t nblocks) noexcept;

// Slice pages.  The glue initialises the page (PageInit, 16-byte special
// space); slice_page_fill writes the words, the bounds and the special
// space.  words: kSliceWords of them.
inline const uint64_t *slice_page_words(const uint8_t *page) noexcept
{
    return reinterpret_cast<const uint64_t *>(page + kPageHeaderSize);
}
constexpr uint32_t kSlicePageLower = kPageHeaderSize + kSliceWords * 8; // 8,152
void slice_page_fill(uint8_t *page, const uint64_t *words, uint16_t rows, uint16_t slice,
                     uint32_t segment_id) noexcept;

// What is wrong with a page, if anything.
enum class PageProblem {
    None,
    NotBloomidx,   // special space missing or page_id wrong
    WrongKind,     // a metapage where a data page belongs, or the reverse
    BadFormat,     // a storage format this build does not know
    BadCount,      // more entries than the page can hold
    BadBounds,     // pd_lower / pd_upper / pd_special out of place
    BadMagic,      // metapage magic number wrong
    BadVersion,    // metapage written by another format version (REINDEX)
    BadOptions,    // metapage options out of range or inconsistent
    BadSignatures, // signatures do not add up to the page's sum
    BadTids,       // heap TIDs do not add up to the page's sum
    BadSlice,      // a slice page of another segment, slice or row count
    BadSliceBits,  // slice words do not add up to the page's sum
};

// Which entry sums check_row_page tests after the page's structure.  A
// scan reads every signature but only the TIDs of rows that match, so it
// tests the TIDs (check_row_page_tids) of those pages alone; verify tests
// the sums last, after the entries one by one, to name the damaged entry.
enum class EntryChecks { None, Signatures, SignaturesAndTids };

// Checks a data page against the geometry the metapage promises.
PageProblem check_row_page(const uint8_t *page, const RowPageGeometry &g,
                           EntryChecks entries = EntryChecks::SignaturesAndTids) noexcept;
// The two sums alone, on a page whose structure check_row_page passed.
PageProblem check_row_page_signatures(const uint8_t *page, const RowPageGeometry &g) noexcept;
PageProblem check_row_page_tids(const uint8_t *page) noexcept;

// Checks a slice page: slice `slice` of segment `segment_id`, holding
// `rows` rows, whose words add up to its sum.
PageProblem check_slice_page(const uint8_t *page, uint16_t rows, uint16_t slice,
                             uint32_t segment_id) noexcept;

// Checks a metapage.
PageProblem check_meta_page(const uint8_t *page) noexcept;

// Words for error messages.
const char *page_problem_text(PageProblem problem) noexcept;

} // namespace bloomidx
