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
// Slice page (format 2, for the bit-sliced segments of storage/README.md):
// bit j of a segment's rows (and of slices j + 1.. where the segment packs
// several a page: slice_spot below),
//
//   [page header, 24 B][kSliceWords words: row r at word r / 64, bit r % 64][hole, 24 B][special, 16 B]
//                                                                          ^pd_lower  ^pd_upper
//
// In the special space: count = the segment's rows, flags = kPageSlice,
// format = kFormatSliced, signature_sum = the entry sum of the words,
// tid_sum = j (the page's first slice), reserved = the segment's id (low
// half first).  The sum is
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

#include "page_delta.hpp"
#include "segment_filter.hpp"
#include "signature.hpp"
#include "slices.hpp"
#include "tid_codec.hpp"

namespace bloomidx {

constexpr uint32_t kBlockSize = 8192;
constexpr uint32_t kPageHeaderSize = 24; // SizeOfPageHeaderData
constexpr uint32_t kTidSize = 6;         // sizeof(ItemPointerData)
constexpr uint32_t kMetaBlock = 0;

// Offsets of PageHeaderData fields the core reads (checked by the glue).
constexpr uint32_t kPdLowerOffset = 12;
constexpr uint32_t kPdUpperOffset = 14;
constexpr uint32_t kPdSpecialOffset = 16;
constexpr uint32_t kPdPruneXidOffset = 20; // heap's; pending and free pages keep a stamp there

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
constexpr uint16_t kPageData = 2;        // row-wise: a pending page
constexpr uint16_t kPageSlice = 3;       // a segment's slice
constexpr uint16_t kPageSegment = 4;     // a segment's header
constexpr uint16_t kPageTids = 5;        // a segment's heap TIDs
constexpr uint16_t kPageLive = 6;        // a segment's live bits
constexpr uint16_t kPageFree = 7;        // nothing points here: reusable
constexpr uint16_t kPageSealing = 8;     // a pending page a seal is taking: no inserts
constexpr uint16_t kPageListed = 9;      // a free page VACUUM put on the free list: no inserts
constexpr uint16_t kPageDirectory = 10;  // directory entries past the metapage's
constexpr uint16_t kPageFilterGroup = 11; // a filter group's header
constexpr uint16_t kPageFilter = 12;      // a filter group's region page
constexpr uint16_t kPageKeys = 13;        // a small segment's rows' filter keys

// Pending pages, whether a seal is taking them or not.
constexpr bool is_pending_kind(uint16_t flags)
{
    return flags == kPageData || flags == kPageSealing;
}
constexpr uint16_t kPageId = 0xB1D5;
constexpr uint32_t kSpecialOffset = kBlockSize - sizeof(PageOpaque);
constexpr uint32_t kPayloadBytes = kSpecialOffset - kPageHeaderSize; // 8,152

// Metapage, right after the page header of block 0.
constexpr uint32_t kMetaMagic = 0x626C6478; // "bldx"
constexpr uint16_t kMetaVersion = 19;       // bump on any change to this file that
                                            // indexes see (6: segments, pending list;
                                            // 7: the free-run list; 8: segments as
                                            // extents, the free list; 9: weighted
                                            // page sums, listed pages; 10: directory
                                            // pages past 224 inline entries; 11: segment
                                            // filter groups; 12: filter keys in
                                            // pending rows, filters of sealed and
                                            // merged segments; 13: groups of up to 127
                                            // slots, group ids from a counter; 14:
                                            // packed slices; 15: listed groups of
                                            // many segments, gathered by VACUUM;
                                            // 16: key pages of small segments;
                                            // 17: pending groups; 18: 8-byte filter
                                            // blocks, groups of up to 1,016 slots;
                                            // 19: runs of TIDs, tid_codec.hpp)
constexpr uint16_t kMetaVersionOldest = 19; // the oldest format read (13 to 18 were
                                            // never released: development builds of 1.2)
constexpr uint16_t kFormatRowWise = 1;      // pending pages (and the metapage's format)
constexpr uint16_t kFormatSliced = 2;       // pages of a segment
constexpr uint16_t kHashXxh3V2 = 2;         // hash.cpp + positions.cpp + the glue's
                                            // value hashing (support/value_hash.cpp), version 2

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
    uint16_t filter_keys;     // 1: pending rows keep each column's filter key (a build
                              // that writes filters says so), 0: they do not
    uint32_t unused_block;    // 0 (format 5's insert hint; the pending tail took its place)
    uint16_t column_bits[32]; // bits each column's value sets
    uint8_t column_hashing[32]; // kHashByValue or kHashByFunction
    uint32_t options_check;   // hash of every field above but unused_block
};
static_assert(sizeof(MetaPageData) == 124, "metapage layout is fixed");

// The check of a metapage's frozen fields.  A damaged bit count that is
// still in range would otherwise make every scan compute other positions
// and miss rows silently; with it, the damage is reported instead.
uint32_t meta_options_check(const MetaPageData *meta) noexcept;

// A pending page's entries: signatures from the front (a scan tests them
// as one array), and from the back each row's tail: its heap TID, then,
// in an index that keeps filter keys (MetaPageData::filter_keys), one
// 32-bit filter key per column (segment_filter.hpp), which a seal needs
// to build the new segment's filters without reading the table again.
struct RowPageGeometry {
    uint32_t signature_bytes;
    uint32_t capacity;
    uint32_t tail_bytes; // kTidSize + 4 * key columns
    uint32_t keys;       // filter keys per row: 0 or the index's columns
};

constexpr uint32_t kFilterKeySize = 4;
constexpr uint32_t kMaxRowTailBytes = kTidSize + kFilterKeySize * kMaxColumns;

constexpr RowPageGeometry row_page_geometry(uint32_t signature_bytes, uint32_t keys = 0)
{
    return RowPageGeometry{signature_bytes,
                           kPayloadBytes / (signature_bytes + kTidSize + keys * kFilterKeySize),
                           kTidSize + keys * kFilterKeySize, keys};
}

// More entries than any data page holds (the shortest signature, 2 bytes,
// gives the most): the size of per-page arrays in scans and vacuum.
constexpr uint32_t kMaxPageEntries = kPayloadBytes / (2 + kTidSize);

// Where the hole starts and ends on a data page with `count` entries.
constexpr uint32_t row_page_lower(const RowPageGeometry &g, uint32_t count)
{
    return kPageHeaderSize + count * g.signature_bytes;
}
constexpr uint32_t row_page_upper(const RowPageGeometry &g, uint32_t count)
{
    return kSpecialOffset - count * g.tail_bytes;
}

// 16-bit fields of a page (pd_lower...), read and written in place.
inline uint16_t read_u16(const uint8_t *p) noexcept
{
    uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline void write_u16(uint8_t *p, uint32_t v) noexcept
{
    uint16_t w = static_cast<uint16_t>(v);
    std::memcpy(p, &w, sizeof w);
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
// Entry i's tail: its TID, then its filter keys (g.keys of them).
inline uint8_t *row_tid(uint8_t *page, const RowPageGeometry &g, uint32_t i) noexcept
{
    return page + row_page_upper(g, i + 1);
}
inline const uint8_t *row_tid(const uint8_t *page, const RowPageGeometry &g, uint32_t i) noexcept
{
    return page + row_page_upper(g, i + 1);
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
    return (g.capacity - count) * (g.signature_bytes + g.tail_bytes);
}

// Fills in a fresh metapage's contents (the page itself is initialised
// by the glue, which owns PageInit).
void meta_fill(MetaPageData *meta, uint16_t signature_bits, uint16_t ncolumns,
               const uint16_t *column_bits, const uint8_t *column_hashing,
               bool filter_keys = false) noexcept;

// The pending pages' geometry a metapage gives.
inline RowPageGeometry meta_row_geometry(const MetaPageData &meta) noexcept
{
    return row_page_geometry(meta.signature_bytes, meta.filter_keys ? meta.ncolumns : 0);
}

// The sum mod 2^16 of `len` bytes (even) taken as 16-bit words.
uint16_t entry_sum(const uint8_t *bytes, uint32_t len) noexcept;

// The sum of a page written whole (slice, live, TID, segment header
// pages): word i (16 bits) of `len` bytes (even) weighed 2i + 1, mod 2^16.
// Odd weights find every change of one word, as the plain sum does, and
// the weights find words moved within the page too (a swap of words i
// and j goes unseen only if 2(j - i)(w_i - w_j) = 0 mod 2^16), which the
// plain sum cannot.  Row pages keep plain entry sums: their entries move.
uint16_t page_sum(const uint8_t *bytes, uint32_t len) noexcept;
// What page_sum gains when word `word` changes from before to after.
uint16_t page_sum_change(uint32_t word, uint16_t before, uint16_t after) noexcept;

// The entry sums a data page holds: signatures in the low half, TIDs in
// the high half.
uint32_t row_page_stored_sums(const uint8_t *page) noexcept;

// Appends one entry to a row-wise data page with room for it: `tail` is
// its g.tail_bytes (the TID, then the filter keys).
void row_page_append(uint8_t *page, const RowPageGeometry &g, const uint8_t *signature,
                     const uint8_t *tail) noexcept;

// The bytes row_page_append changes on a page holding `count` entries:
// pd_lower and pd_upper, the signature and TID slots, the special space
// (count and sums).  What the WAL record of an append carries.
constexpr uint32_t kAppendRanges = 4;
void row_page_append_ranges(const RowPageGeometry &g, uint32_t count,
                            PageRange out[kAppendRanges]) noexcept;
// The bytes of those ranges' delta (page_delta.hpp) for entries of g.
constexpr uint32_t append_delta_size(const RowPageGeometry &g)
{
    return page_delta_size(kAppendRanges, 2 * sizeof(uint16_t) + g.signature_bytes +
                                              g.tail_bytes + sizeof(PageOpaque));
}

// Moves entry `from` to slot `to` (to < from), as vacuum compacts a page.
void row_page_move(uint8_t *page, const RowPageGeometry &g, uint32_t from, uint32_t to) noexcept;

// Keeps the first `count` entries: sets the count and the hole, and zeroes
// what the entries past it used.
void row_page_truncate(uint8_t *page, const RowPageGeometry &g, uint32_t count) noexcept;

// A segment directory entry (storage/README.md), 32 bytes: 224 of them
// inline in the metapage, the rest on directory pages (format 10).
// The check covers every other field, so a damaged entry, which would
// send a scan to the wrong blocks or drop a segment's rows, is an error.
struct SegmentEntry {
    uint32_t segment_id;    // nonzero; also on each of the segment's pages
    uint32_t header_block;  // the segment header page
    uint32_t first_slice;   // slice j at block first_slice + j
    uint16_t rows;          // 1..kSegmentRows
    uint16_t live_rows;     // rows VACUUM has not cleared
    uint32_t filter_block;  // the header block of its filter group (0: no filters)
    uint16_t filter_offset; // ... its slot there (0..kGroupSlots - 1)
    uint16_t slices_per_page; // packed slices (below); 0: one a page
    uint32_t filter_group;  // ... and the group's id (0 without filters)
    uint32_t check;         // segment_entry_check of the fields above
};
static_assert(sizeof(SegmentEntry) == 32, "directory entries are 32 bytes");

// Packed slices (format 14).  A slice of n rows needs slice_lines(n) cache
// lines; format 13 gave each slice a page of 127 lines whatever n, so a
// segment of 2,000 rows took as many slice pages as one of 65,024.  Format
// 14 puts k = packed_slices_per_page(n) slices on a page, one after
// another: slice j on the segment's slice page j / k, from word
// (j % k) * slice_lines(n) * 8, the page's words past the last slice zero.
// A segment of over 32,256 rows has k = 1: the format 13 layout.  Its
// directory entry and header say k (slices_per_page; 0: one a page
// whatever the rows, as format 13 had it, which the tests still write,
// bloomidx.debug_unpacked_slices, so that readers meet both).
constexpr uint16_t packed_slices_per_page(uint32_t rows) noexcept
{
    return rows == 0 || rows > kSegmentRows ? 1
                                            : static_cast<uint16_t>(kSliceLines / slice_lines(rows));
}
// Whether a segment of `rows` rows may say slices_per_page.
constexpr bool slices_per_page_ok(uint32_t rows, uint16_t slices_per_page) noexcept
{
    return slices_per_page == 0 || slices_per_page == packed_slices_per_page(rows);
}
// The slice pages of a segment of nslices slices, slices_per_page a page.
constexpr uint32_t slice_page_count(uint32_t nslices, uint16_t slices_per_page) noexcept
{
    return slices_per_page <= 1 ? nslices : (nslices + slices_per_page - 1) / slices_per_page;
}
// Where slice j is: the segment's slice page `page` (block first_slice +
// page), from word `word`; `first` is the first slice on that page.
struct SliceSpot {
    uint32_t page;
    uint32_t word;
    uint32_t first;
};
// The slices on the segment's slice page `page`: [first, end).
struct SliceRange {
    uint32_t first;
    uint32_t end;
};
constexpr SliceRange slice_page_range(uint32_t page, uint32_t nslices,
                                      uint16_t slices_per_page) noexcept
{
    const uint32_t per = slices_per_page <= 1 ? 1 : slices_per_page;
    const uint32_t first = page * per;
    return SliceRange{first, first + per < nslices ? first + per : nslices};
}
constexpr SliceSpot slice_spot(uint32_t j, uint32_t rows, uint16_t slices_per_page) noexcept
{
    return slices_per_page <= 1
               ? SliceSpot{j, 0, j}
               : SliceSpot{j / slices_per_page,
                           j % slices_per_page * slice_lines(rows) * kSliceLineWords,
                           j - j % slices_per_page};
}

// The rows from which a build's last ones become a segment rather than
// pending pages, when the index has `nsegments` other segments (src/build_part.cpp
// says why), at most a segment's rows: once their pending pages would be
// more than max(m / (nsegments + 1), kTailPendingPages), which costs in
// size at most a share of the index as large as one segment's.  Slices
// packed (format 14), sooner: once they would fill more than
// kTailPendingPages pending pages and, from there up to a segment's rows,
// their segment (its slice pages, live page, TID pages at 2 bytes a row,
// header) would take no more pages than they would pending (a slice takes
// a 64-byte line per 512 rows, and fewer slices share a page as lines are
// added, so a few rows of a long signature take more pages as a segment).
constexpr uint32_t kTailPendingPages = 4;
constexpr uint64_t tail_segment_rows(uint32_t signature_bits, uint32_t nsegments,
                                     uint32_t pending_capacity, uint32_t segment_capacity,
                                     bool packed)
{
    uint64_t pages = signature_bits / (static_cast<uint64_t>(nsegments) + 1);
    pages = pages > kTailPendingPages ? pages : kTailPendingPages;
    uint64_t rows = pages * pending_capacity;
    rows = rows < segment_capacity ? rows : segment_capacity;
    if (packed && pending_capacity > 0) {
        // Down from a segment's rows, while rows taking `pages` pending
        // pages take no more as a segment (at the most such rows: a
        // segment's pages grow with its rows).
        const uint64_t last = (uint64_t{segment_capacity} + pending_capacity - 1) / pending_capacity;
        uint64_t from = last + 1;
        for (uint64_t p = last; p > kTailPendingPages; p--) {
            const uint64_t most = p * pending_capacity;
            const uint32_t r = static_cast<uint32_t>(most < segment_capacity ? most : segment_capacity);
            const uint64_t tid_pages = (uint64_t{r} * 2 + kPayloadBytes - 1) / kPayloadBytes;
            if (slice_page_count(signature_bits, packed_slices_per_page(r)) + 2 + tid_pages > p)
                break;
            from = p;
        }
        const uint64_t packed_rows = (from - 1) * pending_capacity + 1;
        if (from <= last && packed_rows < rows)
            rows = packed_rows;
    }
    return rows;
}

// The metapage's second part (format 6), at kDirectoryOffset: the pending
// list and the segment directory.  Every change to it goes with a new
// `check` (directory_check): a damaged segment count or list head would
// otherwise hide rows from every scan.
struct DirectoryHeader {
    uint32_t generation;      // directory changes so far (publishes)
    uint32_t next_segment_id; // spent by the publish that adds a segment: never two published segments with one id
    uint32_t pending_head;    // first pending page (0: none)
    uint32_t pending_tail;    // last pending page, the one inserts fill (0: none)
    uint32_t next_group_id;   // the next group of many segments' id (>= kFirstGroupId)
    uint32_t pending_pages;   // pages in the pending list, sealed ones included
    uint16_t nsegments;       // directory entries in use
    uint16_t reserved;        // 0
    uint32_t check;           // directory_check of the fields above
};
static_assert(sizeof(DirectoryHeader) == 32, "directory header is 32 bytes");

constexpr uint32_t kDirectoryOffset = 152; // page header + MetaPageData, 8-aligned
constexpr uint32_t kInlineSegments = 224;  // 14.6 M rows of full segments

// Directory pages (format 10): the entries past the metapage's 224, in
// order, 254 a page, on pages the metapage lists (DirectoryPageList, after the
// inline entries).  Entry i >= 224 is on page (i - 224) / 254:
//
//   [page header, 24 B][SegmentEntry x count][hole][special, 16 B]
//                                            ^pd_lower = pd_upper
//
// In the special space: count = its entries (every page but the last
// full), flags = kPageDirectory, signature_sum = page_sum of the entries,
// tid_sum = the page's place in the list; in pd_prune_xid (page_stamp)
// the generation whose publish listed it.  A publish never changes one in
// place: it writes the pages whose entries change to other blocks and
// switches the list in its metapage record, so a reader that meets a page
// not of its kind, place or count, or stamped after its copy of the
// metapage, copies again (VACUUM changes a live count in place, under the
// seal lock, as it does the inline entries).  126 pages: 32,228 segments,
// 2.1 billion rows of full segments.
enum class PageProblem;
constexpr uint32_t kDirectoryPageEntries = 254;
constexpr uint32_t kMaxDirectoryPages = 126;
constexpr uint32_t kMaxSegments = kInlineSegments + kMaxDirectoryPages * kDirectoryPageEntries;
static_assert(kPageHeaderSize + kDirectoryPageEntries * 32 <= kSpecialOffset,
              "a directory page's entries fit");
static_assert(kMaxSegments <= 65535, "nsegments is 16 bits");
struct DirectoryPageList {
    uint16_t count;                      // directory pages: directory_pages(nsegments)
    uint16_t reserved;                   // 0
    uint32_t check;                      // directory_page_list_check of the fields around it
    uint32_t blocks[kMaxDirectoryPages]; // zero past count
};
static_assert(sizeof(DirectoryPageList) == 512, "the directory page list is 512 bytes");
constexpr uint32_t kDirectoryPageListOffset =
    kDirectoryOffset + sizeof(DirectoryHeader) + kInlineSegments * 32; // 7,352

// Directory pages a directory of n entries has.
constexpr uint32_t directory_pages(uint32_t nsegments)
{
    return nsegments <= kInlineSegments
               ? 0
               : (nsegments - kInlineSegments + kDirectoryPageEntries - 1) / kDirectoryPageEntries;
}
// Entries on directory page p of a directory of n entries.
constexpr uint32_t directory_page_count(uint32_t nsegments, uint32_t p)
{
    return p + 1 < directory_pages(nsegments)
               ? kDirectoryPageEntries
               : nsegments - kInlineSegments - p * kDirectoryPageEntries;
}
uint32_t directory_page_list_check(const DirectoryPageList &l) noexcept;
// An empty list with its check.
void directory_page_list_init(DirectoryPageList *l) noexcept;
// Removes the entries whose ids are removed[0..nremoved) from entries[0..n)
// and adds *added (unless null; entries has room for n + 1), moving few
// entries: the added one takes the first hole, the last entries fill the
// others (the directory's order means nothing), so a change rewrites only
// the directory pages of its holes and of the end.  Returns the new count,
// or UINT32_MAX (entries then undefined) unless each id to remove was
// listed exactly once.
uint32_t directory_apply(SegmentEntry *entries, uint32_t n, const uint32_t *removed,
                         uint32_t nremoved, const SegmentEntry *added) noexcept;
// Names another filter group in entries of entries[0..n): each entry of
// refiled[0..nrefiled) replaces the filter group, block and slot of the
// entry of its segment id (its check recomputed); the rest of it is
// ignored.  False (entries then undefined) unless each id is there once.
bool directory_refile(SegmentEntry *entries, uint32_t n, const SegmentEntry *refiled,
                      uint32_t nrefiled) noexcept;
// Writes `count` entries as directory page `place` onto an initialised page.
void directory_page_fill(uint8_t *page, const SegmentEntry *entries, uint16_t count,
                         uint16_t place) noexcept;
// Sets a directory page's sum again after its entries changed in place.
void directory_page_resum(uint8_t *page) noexcept;
// Keeps a directory page's sum as entry `place` changed from `before`.
void directory_page_entry_changed(uint8_t *page, uint32_t place,
                                  const SegmentEntry &before) noexcept;
// The directory page holding entry `slot` (>= kInlineSegments), and the
// entry's place on its page (or in the metapage).
constexpr uint32_t directory_page_of(uint32_t slot)
{
    return (slot - kInlineSegments) / kDirectoryPageEntries;
}
// Checks directory page `place`, holding `count` entries.
PageProblem check_directory_page(const uint8_t *page, uint16_t count, uint16_t place) noexcept;
inline SegmentEntry *directory_page_entries(uint8_t *page) noexcept
{
    return reinterpret_cast<SegmentEntry *>(page + kPageHeaderSize);
}
inline const SegmentEntry *directory_page_entries(const uint8_t *page) noexcept
{
    return reinterpret_cast<const SegmentEntry *>(page + kPageHeaderSize);
}

// The metapage's third part (format 8), after the entries: extents of
// blocks that removed segments left, for the next segments to take.  A
// segment is written in one extent of consecutive blocks (its slices, its
// live page, its TID pages, its header), so a removed one gives back one
// extent, and segments written one after another give back extents that
// touch and join: under churn the index reuses its blocks instead of
// growing, and the list seldom fills.  Only the seal lock's holder changes
// the list, in the same metapage record that publishes a segment (blocks
// taken) or removes one (blocks given back).  A damaged list could send a
// segment over live pages, hence its check and the writers' checks.
constexpr uint32_t kMaxFreeExtents = 30;
struct FreeExtent {
    uint32_t first;   // its first block
    uint32_t nblocks; // >= 1
};
struct FreeList {
    uint16_t count;                      // extents listed
    uint16_t reserved;                   // 0
    uint32_t check;                      // free_list_check of the fields around it
    FreeExtent extents[kMaxFreeExtents]; // zero past count
};
static_assert(sizeof(FreeList) == 248, "free list is 248 bytes");
constexpr uint32_t kFreeListOffset = kDirectoryPageListOffset + sizeof(DirectoryPageList); // 7,864

// The metapage's fourth part (format 17), after the free list: where the
// pending pages' filters start (storage/README.md, *Pending filters*).
// The pages of the pending list that filled, in list order from some page
// on, each have a slot in a chain of pending groups: filter groups whose
// slots are pending pages (FilterGroupHeader::slot_segment holds the
// page's block, flags kGroupListed | kGroupPending), so that a scan reads
// a group's header and a region page a key for 127 pending pages, and
// only the pages whose filters may hold its keys.  Only the seal lock's
// holder changes the groups; a publish that moves the pending list's head,
// and VACUUM before it removes pending rows, drops them all.
struct PendingFilters {
    uint32_t first_group;    // header block of the chain's first group (0: none)
    uint32_t first_group_id; // its group id (0: none)
    uint32_t reserved;       // 0
    uint32_t check;          // pending_filters_check of the fields above
};
static_assert(sizeof(PendingFilters) == 16, "pending filters are 16 bytes");
constexpr uint32_t kPendingFiltersOffset = kFreeListOffset + sizeof(FreeList); // 8,112
constexpr uint32_t kMetaPageLower = kPendingFiltersOffset + sizeof(PendingFilters); // 8,128
static_assert(kMetaPageLower <= kSpecialOffset, "the metapage's parts fit");

uint32_t segment_entry_check(const SegmentEntry &e) noexcept;
// Whether an entry is sound for an index of `nblocks` blocks whose
// signatures have `nslices` bits (its extent's size from its rows and
// slices_per_page).
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

// The metapage's directory part.
inline DirectoryHeader *directory_header(uint8_t *page) noexcept
{
    return reinterpret_cast<DirectoryHeader *>(page + kDirectoryOffset);
}
inline const DirectoryHeader *directory_header(const uint8_t *page) noexcept
{
    return reinterpret_cast<const DirectoryHeader *>(page + kDirectoryOffset);
}
inline SegmentEntry *directory_entries(uint8_t *page) noexcept
{
    return reinterpret_cast<SegmentEntry *>(page + kDirectoryOffset + sizeof(DirectoryHeader));
}
inline const SegmentEntry *directory_entries(const uint8_t *page) noexcept
{
    return reinterpret_cast<const SegmentEntry *>(page + kDirectoryOffset +
                                                  sizeof(DirectoryHeader));
}
uint32_t directory_check(const DirectoryHeader &d) noexcept;
// An empty directory (next_segment_id 1) with its check.
void directory_init(DirectoryHeader *d) noexcept;

inline DirectoryPageList *directory_page_list(uint8_t *page) noexcept
{
    return reinterpret_cast<DirectoryPageList *>(page + kDirectoryPageListOffset);
}
inline const DirectoryPageList *directory_page_list(const uint8_t *page) noexcept
{
    return reinterpret_cast<const DirectoryPageList *>(page + kDirectoryPageListOffset);
}

inline FreeList *free_list(uint8_t *page) noexcept
{
    return reinterpret_cast<FreeList *>(page + kFreeListOffset);
}
inline const FreeList *free_list(const uint8_t *page) noexcept
{
    return reinterpret_cast<const FreeList *>(page + kFreeListOffset);
}
uint32_t free_list_check(const FreeList &l) noexcept;
inline PendingFilters *pending_filters(uint8_t *page) noexcept
{
    return reinterpret_cast<PendingFilters *>(page + kPendingFiltersOffset);
}
inline const PendingFilters *pending_filters(const uint8_t *page) noexcept
{
    return reinterpret_cast<const PendingFilters *>(page + kPendingFiltersOffset);
}
uint32_t pending_filters_check(const PendingFilters &f) noexcept;
// No pending groups, with its check; or the chain from group_id's header at block.
void pending_filters_set(PendingFilters *f, uint32_t block, uint32_t group_id) noexcept;
// An empty list with its check.
void free_list_init(FreeList *l) noexcept;
// Adds blocks [first, first + n), joining the extents they touch; false
// (the list unchanged) when they touch none and every slot is in use, or
// when they overlap a listed extent (damage: blocks freed twice).  Keeps
// the check.
bool free_list_push(FreeList *l, uint32_t first, uint32_t n) noexcept;
// Takes n consecutive blocks off the list, from the start of the lowest
// extent that has as many, and returns the first; 0 (the list unchanged)
// when no extent has n.  Keeps the check.  Lowest first (address-ordered
// first fit), so that what is written goes to the front of the index and
// the free pages gather at its end, where VACUUM can give them back
// (storage/truncate.cpp); every run taken is about a segment's size, so
// long extents need not be kept whole.
uint32_t free_list_take(FreeList *l, uint32_t n) noexcept;
// Takes the extent [first, first + n) off the list whole; false (the list
// unchanged) when it is not listed exactly so.  Keeps the check.
bool free_list_drop(FreeList *l, uint32_t first, uint32_t n) noexcept;
// Blocks listed in all.
uint64_t free_list_blocks(const FreeList &l) noexcept;
// Whether any of blocks [first, first + n) is listed.
bool free_list_overlaps(const FreeList &l, uint32_t first, uint32_t n) noexcept;
// Whether extent `extent` (its place in the list) lies in an index of
// nblocks blocks and clear of the metapage, of the listed segments (their
// slices and header pages) and of the list's other extents.  An extent
// that fails is damage: writing there would overwrite pages in use.
bool free_extent_ok(const FreeList &l, uint32_t extent, uint32_t nslices, uint32_t nblocks,
                    const SegmentEntry *entries, uint32_t nentries) noexcept;

// Pending pages are row-wise data pages linked in a list (storage/README.md):
// the next page's block sits in the special space's reserved words.
inline uint32_t pending_next(const uint8_t *page) noexcept
{
    const PageOpaque *op = page_opaque(page);
    return op->reserved[0] | (static_cast<uint32_t>(op->reserved[1]) << 16);
}
inline void set_pending_next(uint8_t *page, uint32_t next) noexcept
{
    PageOpaque *op = page_opaque(page);
    op->reserved[0] = static_cast<uint16_t>(next);
    op->reserved[1] = static_cast<uint16_t>(next >> 16);
}

// The directory generation a pending page was linked in, or a free page
// freed in, kept in the page header's pd_prune_xid (a heap field that no
// index page otherwise uses; PageInit zeroes it).  A scan that finds a
// stamp newer than its copy of the directory knows the page was recycled
// since, and starts again (storage/README.md).
inline uint32_t page_stamp(const uint8_t *page) noexcept
{
    uint32_t v;
    std::memcpy(&v, page + kPdPruneXidOffset, sizeof v);
    return v;
}
inline void set_page_stamp(uint8_t *page, uint32_t generation) noexcept
{
    std::memcpy(page + kPdPruneXidOffset, &generation, sizeof generation);
}

// Segment header page (format 2): right after the page header,
//
//   SegmentHeader: id, rows, first slice block, live page block, the TID
//   pages' blocks, its key pages (format 16, below), and where each group
//   of 64 rows' TIDs starts
//
// One extent: the slices, the live page, the TID pages, the key pages,
// then the header.
//
// In the special space: count = rows, flags = kPageSegment, signature_sum
// = the entry sum of the SegmentHeader, reserved = the segment's id.
//
// TID page: the bytes of whole TID groups (core/tid_codec.hpp) from the
// page header on, pd_lower = their end; count = groups on the
// page, signature_sum = the entry sum of the bytes, tid_sum = the page's
// index in the header's tid_blocks, reserved = the segment's id (the sum
// covers an odd length's pad byte, zero in the hole).  A
// group's bytes end where the next group on the same page starts, or at
// pd_lower.
//
// Live page: like a slice page (kSliceWords words, bit r = row r), flags
// kPageLive, tid_sum 0; VACUUM clears the bits of dead rows.
//
// Key pages (format 16): a small segment (a quarter of a segment's rows at
// most, kKeyedRowsMax, as VACUUM's seals and the merges of small segments
// write) keeps its rows' filter keys,
// as its pending rows did, so that a merge of small segments makes the
// merged segment's filters from its rows' keys, where ORing its sources'
// filters would keep none past a few sources (storage/README.md, *Steady
// state*).  Key page p, at live_block + 1 + ntid_pages + p (the header
// follows the last), holds rows p * key_rows_per_page(ncolumns) on, each
// row's ncolumns 4-byte keys in column order, from the page header on,
// pd_lower = their end; count = its rows, signature_sum = the entry sum of
// the bytes, tid_sum = p, reserved = the segment's id.
constexpr uint32_t kTidGroups = kSegmentRows / 64;        // 1,016
constexpr uint32_t kMaxTidPages = 64;                     // 56 hold the worst case
constexpr uint32_t kTidPagePayload = kPayloadBytes;       // 8,152 bytes of groups
constexpr uint32_t kKeyedRowsMax = kSegmentRows / 4;      // 16,256

// Rows a key page holds, of ncolumns (1..32) keys each.
constexpr uint32_t key_rows_per_page(uint32_t ncolumns)
{
    return kPayloadBytes / (4 * ncolumns);
}
// Enough for kKeyedRowsMax rows of 32 columns' keys (63 rows a page).
constexpr uint32_t kMaxKeyPages = (kKeyedRowsMax + key_rows_per_page(32) - 1) / key_rows_per_page(32);
static_assert(kMaxKeyPages == 259, "key pages of a quarter segment of 32 columns");
// Key pages a segment of `rows` rows takes, 0 if it may not keep keys.
constexpr uint32_t key_page_count(uint32_t rows, uint32_t ncolumns)
{
    return ncolumns == 0 || rows > kKeyedRowsMax ||
                   (rows + key_rows_per_page(ncolumns) - 1) / key_rows_per_page(ncolumns) >
                       kMaxKeyPages
               ? 0
               : (rows + key_rows_per_page(ncolumns) - 1) / key_rows_per_page(ncolumns);
}

struct TidGroupRef {
    uint16_t page;   // index into SegmentHeader::tid_blocks
    uint16_t offset; // byte offset on that page
};

struct SegmentHeader {
    uint32_t segment_id;
    uint32_t first_slice;     // slice j at block first_slice + j
    uint32_t live_block;
    uint16_t rows;            // 1..kSegmentRows
    uint16_t nslices;         // the index's signature bits
    uint16_t ntid_pages;
    uint16_t ngroups;         // ceil(rows / 64)
    uint16_t slices_per_page; // as its directory entry's
    uint16_t key_pages;       // its rows' filter keys' pages, after its TID pages (0: none)
    uint32_t tid_blocks[kMaxTidPages];
    TidGroupRef groups[kTidGroups];
};
static_assert(sizeof(SegmentHeader) == 24 + 4 * kMaxTidPages + 4 * kTidGroups,
              "segment header layout is fixed");
static_assert(kPageHeaderSize + sizeof(SegmentHeader) <= kSpecialOffset,
              "a segment header fits on a page");

// The blocks of a segment (its slices, live page, TID pages, key pages,
// the header at header_block, and the `group_blocks` blocks of its own
// filter group right after it, 0 if it has none there) as extents of
// consecutive blocks in block order, in out[0..n), n returned (at most
// kMaxSegmentExtents: the slices, live page, each TID page, the key
// pages, the header and the group, before touching extents join): one
// extent for a segment written in one piece.  0 if the header is out of
// range.
constexpr uint32_t kMaxSegmentExtents = 5 + kMaxTidPages;
uint32_t segment_extents(const SegmentHeader &h, uint32_t header_block, uint32_t group_blocks,
                         FreeExtent *out) noexcept;

inline const SegmentHeader *segment_header(const uint8_t *page) noexcept
{
    return reinterpret_cast<const SegmentHeader *>(page + kPageHeaderSize);
}

// Bytes the TID groups of n rows take at most (a pad byte a page).
constexpr size_t segment_tid_bytes_bound(uint32_t nrows)
{
    return static_cast<size_t>(nrows / 64) * tid_group_bound(64) + tid_group_bound(nrows % 64) +
           kMaxTidPages;
}

// Encodes the rows' TIDs (tids[0..nrows), nrows <= kSegmentRows) group by
// group into bytes (room for segment_tid_bytes_bound(nrows)), placing the
// groups on TID pages: fills header->groups, ngroups and ntid_pages, and
// page_start[p] / page_used[p], where page p's bytes are in `bytes`.
// False if a TID is out of range (tid_group_encode).
bool segment_encode_tids(const HeapTid *tids, uint32_t nrows, uint8_t *bytes,
                         SegmentHeader *header, uint32_t *page_start,
                         uint16_t *page_used) noexcept;

// Writes page p of a segment's TIDs onto an initialised page.
void tid_page_fill(uint8_t *page, const uint8_t *bytes, uint16_t used, uint16_t ngroups,
                   uint16_t page_index, uint32_t segment_id) noexcept;

// Writes the header (its fields all set) onto an initialised page.
void segment_header_fill(uint8_t *page, const SegmentHeader &header) noexcept;

// Writes the live bits (kSliceWords words) onto an initialised page.
void live_page_fill(uint8_t *page, const uint64_t *words, uint16_t rows,
                    uint32_t segment_id) noexcept;

// Writes key page `page_index` (rows of ncolumns keys each, `keys` the
// first's) onto an initialised page.
void key_page_fill(uint8_t *page, const uint32_t *keys, uint16_t rows, uint16_t ncolumns,
                   uint16_t page_index, uint32_t segment_id) noexcept;

// Clears row r's live bit, keeping the page's sum; false if it was clear.
bool live_page_clear(uint8_t *page, uint32_t row) noexcept;

// The bytes of group g, given its TID page (checked by check_tid_page).
void tid_group_span(const SegmentHeader &header, const uint8_t *tid_page, uint32_t g,
                    const uint8_t **bytes, size_t *size) noexcept;

// Decodes the TIDs of group g (rows 64g.. of the segment) from its TID
// page into out (room for kTidGroupRows); returns how many, or 0 when the
// bytes are not such a group (damage).
uint32_t tid_page_group(const SegmentHeader &header, const uint8_t *tid_page, uint32_t g,
                        HeapTid *out) noexcept;

// Filter group pages (storage/README.md, *Segment filters*).  A group holds
// the filters of up to slot_capacity (at most kGroupSlots) segments, for
// each column a blocked Bloom filter (core/segment_filter.hpp) of the same
// block count in every slot.  Its header page, at the group's first block,
// is
//
//   FilterGroupHeader: id, slot capacity, slots taken, per column the
//   block count and probes, the segment each slot was taken for, a check
//
// and in the special space count = slots taken, reserved = the group id.
// Region pages follow (region page i at header block + 1 + i), or, in a
// group of one segment's own (a seal's or merge's, flags kGroupListed),
// lie wherever free pages were, their blocks listed on the header page
// after the header (so that such groups reuse single free pages as
// pending pages do, and never need a run of blocks); so do the groups of
// many segments VACUUM gathers from such groups (storage/filter_gather.cpp).  Block rows
// of group_row_bytes (block b of slot s at s * 8 in the row), as many a
// page as fit from the page header on; column c's rows start after the
// rows of the columns before it.  In the special space signature_sum =
// page_sum of the rows, tid_sum = i's low 16 bits and count its high 16,
// reserved = the group id.
//
// Group ids are never reused, so that a stale reader tells a recycled
// page as it does for segments: a group of one segment's own takes that
// segment's id; a group of many segments (a build's) takes the
// directory's next_group_id, from kFirstGroupId up, above every segment
// id.  A full group (1,016 slots of 8-byte blocks, format 18) has
// 8,128-byte rows, one a page, so a key reads one page for 1,016 segments.
// A pending group (kGroupPending) has 127 slots: its slots are written one
// by one as pending pages fill, and a slot touches every block row of its
// columns, so its rows are short (8 a page).
constexpr uint32_t kGroupSlots = 1016;
constexpr uint32_t kPendingGroupSlots = 127;
constexpr uint32_t kFirstGroupId = uint32_t{1} << 30; // segment ids stay below

// A set of a group's slots, bit s for slot s: what a probe of a block row
// answers, and the slots a segment holds.  Plain data, wide enough for
// every capacity the format may give a group.
struct SlotMask {
    static constexpr uint32_t kWords = 16;
    uint64_t bits[kWords];

    static constexpr SlotMask none() noexcept { return SlotMask{}; }
    static SlotMask one(uint32_t s) noexcept
    {
        SlotMask m = none();
        m.set(s);
        return m;
    }
    // Slots 0 .. n - 1.
    static SlotMask first(uint32_t n) noexcept
    {
        SlotMask m = none();
        for (uint32_t w = 0; w < kWords; w++) {
            uint32_t in_word = n > 64 * w ? n - 64 * w : 0;
            m.bits[w] = in_word >= 64 ? ~uint64_t{0} : (uint64_t{1} << in_word) - 1;
        }
        return m;
    }
    void set(uint32_t s) noexcept
    {
        if (s < 64 * kWords)
            bits[s / 64] |= uint64_t{1} << (s % 64);
    }
    bool has(uint32_t s) const noexcept
    {
        return s < 64 * kWords && ((bits[s / 64] >> (s % 64)) & 1) != 0;
    }
    bool any() const noexcept
    {
        uint64_t all = 0;
        for (uint32_t w = 0; w < kWords; w++)
            all |= bits[w];
        return all != 0;
    }
    uint32_t count() const noexcept
    {
        uint32_t n = 0;
        for (uint32_t w = 0; w < kWords; w++)
            n += static_cast<uint32_t>(__builtin_popcountll(bits[w]));
        return n;
    }
    SlotMask operator&(const SlotMask &o) const noexcept
    {
        SlotMask m;
        for (uint32_t w = 0; w < kWords; w++)
            m.bits[w] = bits[w] & o.bits[w];
        return m;
    }
    SlotMask operator|(const SlotMask &o) const noexcept
    {
        SlotMask m;
        for (uint32_t w = 0; w < kWords; w++)
            m.bits[w] = bits[w] | o.bits[w];
        return m;
    }
    SlotMask operator~() const noexcept
    {
        SlotMask m;
        for (uint32_t w = 0; w < kWords; w++)
            m.bits[w] = ~bits[w];
        return m;
    }
    SlotMask &operator&=(const SlotMask &o) noexcept { return *this = *this & o; }
    SlotMask &operator|=(const SlotMask &o) noexcept { return *this = *this | o; }
    bool operator==(const SlotMask &o) const noexcept
    {
        for (uint32_t w = 0; w < kWords; w++)
            if (bits[w] != o.bits[w])
                return false;
        return true;
    }
    bool operator!=(const SlotMask &o) const noexcept { return !(*this == o); }
    // Whether any of slots first .. last is set (none when first > last).
    bool any_in(uint32_t first, uint32_t last) const noexcept
    {
        if (last >= 64 * kWords)
            last = 64 * kWords - 1;
        for (uint32_t s = first; s <= last; s++) {
            if (s % 64 == 0 && s + 63 <= last) { // a whole word at once
                if (bits[s / 64] != 0)
                    return true;
                s += 63;
            } else if (has(s)) {
                return true;
            }
        }
        return false;
    }
    // Sets slots first .. last (none when first > last).
    void set_range(uint32_t first, uint32_t last) noexcept
    {
        for (uint32_t s = first; s <= last && s < 64 * kWords; s++)
            set(s);
    }
};

// The slots a segment holds in its group, as the lowest and the highest:
// a build's or gathered group gives a segment one slot, a merged
// segment's own group up to MERGED_SLOTS_MAX side by side, so the range
// is its slots; were they ever apart, it would hold others too, which
// only lets the segment through more often (never a false negative).  A
// segment's test of a probe's answer is then one bit where a SlotMask of
// its own took 16 words (format 18's 1,016 slots).  Empty: first > last.
struct SlotRange {
    uint16_t first;
    uint16_t last;

    static constexpr SlotRange empty() noexcept { return SlotRange{1, 0}; }
    bool is_empty() const noexcept { return first > last; }
    bool has(uint32_t s) const noexcept { return s >= first && s <= last; }
};
static_assert(kGroupSlots <= 64 * SlotMask::kWords, "a SlotMask holds every slot of a group");
static_assert(kGroupSlots <= 32767, "slot maps (int16_t) hold every slot of a group");

// A column's blocks at most: a segment's rows at 32 bits a value.
constexpr uint32_t kMaxFilterBlocks = kSegmentRows * 32 / kFilterBlockBits; // 32,512
static_assert(kMaxFilterBlocks <= 0xFFFF, "FilterColumn::blocks holds every count");

struct FilterColumn {
    uint16_t blocks; // 0: no filter for the column (every slot passes)
    uint8_t probes;  // 1..kFilterMaxProbes when blocks > 0
    uint8_t reserved;
};

struct FilterGroupHeader {
    uint32_t group_id;
    uint16_t ncolumns;      // the index's columns
    uint16_t slots_taken;   // 0..slot_capacity: slots written or being written
    uint32_t region_pages;  // group_region_pages(*this)
    uint16_t slot_capacity; // 1..kGroupSlots
    uint16_t flags;         // 0 or kGroupListed
    FilterColumn columns[kMaxColumns];
    uint32_t check;         // filter_group_check of the header's bytes on a page
    // The segment each slot was taken for.  On a page the header ends
    // after slot_capacity of them (group_header_bytes), so that a group of
    // few slots has room for its region pages' list; in memory the rest
    // is zero, or, in a copy of a page's header, whatever followed.
    uint32_t slot_segment[kGroupSlots];
};
static_assert(sizeof(FilterGroupHeader) == 20 + 4 * kMaxColumns + 4 * kGroupSlots,
              "filter group header layout is fixed");
constexpr uint32_t kGroupHeaderFixedBytes = 20 + 4 * kMaxColumns; // up to slot_segment
constexpr uint16_t kGroupListed = 1; // region pages listed on the header page
constexpr uint16_t kGroupPending = 2; // slots are pending pages (format 17, with kGroupListed)

// The bytes of a header of `capacity` slots on its page (capacity taken
// within 1..kGroupSlots).
constexpr uint32_t group_header_bytes(uint32_t capacity) noexcept
{
    return kGroupHeaderFixedBytes +
           4 * (capacity < 1 ? 1 : capacity > kGroupSlots ? kGroupSlots : capacity);
}
// Region pages a listed group of `capacity` slots has at most: its list
// fills its header page (a pending group's links after it).  2,000 for a
// seal's group of one slot, 1,970 for a gathered group of 31.
uint32_t group_listed_pages_max(uint32_t capacity, bool pending) noexcept;
// Block of region page i of the group whose header page (checked) is
// `header_page` at block header_block.
uint32_t group_region_block(const uint8_t *header_page, uint32_t header_block,
                            uint32_t i) noexcept;

uint32_t filter_group_check(const FilterGroupHeader &h) noexcept;

// A pending group's header page (format 17) has, after its region pages'
// list, where the chain goes on: the next group, and the pending page that
// followed its last slot's page when that slot was written (the first page
// a scan walks past the group, or the next group's first slot).  Slot s
// holds the filters of the page at slot_segment[s], made from its rows'
// filter keys once the page had filled and had a successor: a full page
// takes no insert until VACUUM removes rows from it, and VACUUM drops the
// groups first.  Every slot's column has the same blocks (a pending page's
// rows at the index's bits a key).
struct PendingGroupLinks {
    uint32_t next_group;    // header block of the next group (0: the last)
    uint32_t next_group_id; // its id (0: none)
    uint32_t after;         // the page after the last slot's (0: no slot yet)
    uint32_t check;         // pending_links_check of the fields above
};
static_assert(sizeof(PendingGroupLinks) == 16, "pending group links are 16 bytes");
uint32_t pending_links_check(const PendingGroupLinks &l) noexcept;
// The links of a pending group's header page (checked).
PendingGroupLinks pending_group_links(const uint8_t *header_page) noexcept;
// Writes a pending group's header page: the header, its region pages'
// blocks and the links (their checks set), onto an initialised page.
void pending_group_page_fill(uint8_t *page, const FilterGroupHeader &h,
                             const uint32_t *region_blocks, const PendingGroupLinks &links) noexcept;
// A pending group's header for pending pages of `rows` rows at bits_per_key.
void pending_group_init(FilterGroupHeader *h, uint32_t group_id, uint32_t ncolumns,
                        uint32_t rows, double bits_per_key) noexcept;
// Writes the blocks of slots first .. first + n - 1 into region page i (a
// page of the group's), its sum moved by what each block changes: slot first + j's filter of
// column c is h.columns[c].blocks blocks back to back at
// column_blocks[j * kMaxColumns + c] (nullptr: the column has none).
void pending_slots_write(uint8_t *region_page, const FilterGroupHeader &h, uint32_t i,
                         uint32_t first, uint32_t n, const uint8_t *const *column_blocks) noexcept;
// The bytes pending_slots_write changes on region page i for slots first
// .. first + n - 1: each of the page's block rows' blocks of those slots,
// then the special space (the page's sum), so that the glue WAL-logs them
// without comparing the whole page before and after (page_delta.hpp).
// Returns how many ranges (at most kPendingSlotRanges: a pending group's
// 8 block rows a page and the sum), or 0 when h's rows do not fit that (a
// header no pending group has).
constexpr uint32_t kPendingSlotRanges =
    kPayloadBytes / (kPendingGroupSlots * kFilterBlockBytes) + 1;
uint32_t pending_slots_ranges(const FilterGroupHeader &h, uint32_t i, uint32_t first, uint32_t n,
                              PageRange out[kPendingSlotRanges]) noexcept;

// A group's block rows: their bytes, how many a region page holds, how
// many in all, and its region pages.
uint32_t group_row_bytes(const FilterGroupHeader &h) noexcept;
uint32_t group_rows_per_page(const FilterGroupHeader &h) noexcept;
uint32_t group_region_rows(const FilterGroupHeader &h) noexcept;
uint32_t group_region_pages(const FilterGroupHeader &h) noexcept;

// The most slots, up to n, of a group whose block rows fill its region
// pages to 85 % or more (1,016 .. 867, 509 .. 434, 339 .. 289, 254 .. 217,
// 203 .. 174, 169 .. 1): a build writes n segments as groups of these
// sizes, one after another, since a group of 700 slots (5,600-byte rows,
// one a page) would leave 31 % of its pages empty.  Not more: each group
// costs a query its header and a page a key (16 segments as 14 and 2 took
// a 2-column miss from 10 index buffers to 16).  n for n = 0.
uint32_t group_slots_packed(uint32_t n) noexcept;

// A new group's header of `capacity` slots for a first segment whose
// column c has distinct[c] distinct values, at bits_per_key (0: no
// filters).
void filter_group_init(FilterGroupHeader *h, uint32_t group_id, uint32_t ncolumns,
                       const uint32_t *distinct, double bits_per_key, uint32_t capacity) noexcept;

// Where the block row of filter key `key` in column c's region is: region page and
// byte offset on the page.  False when the column has no filter.
bool group_row_of(const FilterGroupHeader &h, uint32_t column, uint32_t key,
                  uint32_t *region_page, uint32_t *offset) noexcept;

// The slots taken for segment `segment_id`.
SlotMask group_segment_slots(const FilterGroupHeader &h, uint32_t segment_id) noexcept;

// The slots taken for each of n segments of one group, in one pass over
// the slots (group_segment_slots for each would take n passes: a query
// over 1,953 segments spent 40 % of its time so): ranges[j] gets the
// lowest and highest slot of ids[j] (empty when it has none).  `table`,
// the caller's, holds group_slot_table_size(n) words: a hash table of
// the ids, so that the pass costs a lookup a slot (a sort of the ids and
// a binary search a slot took 17 % of a lookup over 1,953 segments).
uint32_t group_slot_table_size(uint32_t n) noexcept;
void group_segments_slot_ranges(const FilterGroupHeader &h, const uint32_t *ids, uint32_t n,
                                uint32_t *table, SlotRange *ranges) noexcept;

// The owner of each slot of a group, among n segments' ranges (as
// group_segments_slot_ranges gives them): owner[s] = j for each slot s of
// ranges[j], -1 for a slot no range holds (owner: kGroupSlots entries).
// A query's IN list answers are a few slots an element, and a slot's
// owner is then its one lookup, where every range would be looked up for
// every element.  False when two ranges share a slot (a range spans its
// segment's lowest to highest slot; damage may repeat an id): a slot
// must then answer for each range that holds it, and owner is not to be
// used.
bool group_slot_owners(const SlotRange *ranges, uint32_t n, int16_t *owner) noexcept;

// A directory's entries in group order, as the filter scan takes them:
// keys[i] = (filter block << 32) | entry index, sorted in place (by
// block, then index).
inline uint64_t group_order_key(uint32_t filter_block, uint32_t entry) noexcept
{
    return (uint64_t{filter_block} << 32) | entry;
}
void sort_group_order(uint64_t *keys, uint32_t n) noexcept;

// Which of the first `slots` slots may hold `key`.
SlotMask group_row_probe(const uint8_t *row, uint32_t probes, uint32_t slots,
                         uint32_t key) noexcept;
// Which of the slots in `within` (all below the row's slots) may hold
// `key`: bloomidx_verify asks one segment's slots of a row of 1,016.
SlotMask group_row_probe_within(const uint8_t *row, uint32_t probes, const SlotMask &within,
                                uint32_t key) noexcept;

// Adds filter key `key` of column c to slot s of a group's rows, `image`
// holding all its region rows back to back (group_region_rows(h) *
// group_row_bytes(h) bytes); group_image_add_column adds n of them
// (keys[i * stride]),
// building the slot's filter in `scratch` (kFilterScratchBytes) first: in
// the image a slot's blocks lie a row apart, up to 4 MB for one column,
// and adding to them in place missed the cache at every key.
constexpr uint32_t kFilterScratchBytes = kMaxFilterBlocks * kFilterBlockBytes;
void group_image_add(uint8_t *image, const FilterGroupHeader &h, uint32_t column,
                     uint32_t slot, uint32_t key) noexcept;
void group_image_add_column(uint8_t *image, const FilterGroupHeader &h, uint32_t column,
                            uint32_t slot, const uint32_t *keys, uint32_t n,
                            uint32_t stride, uint8_t *scratch) noexcept;

// ORs what region page `region_page` of group `from` (its rows at `rows`,
// as on the page) holds for slot s into slot slot_map[s] of the image of
// group `to` (none where slot_map[s] < 0), each column widened to to's
// block count (filter_widened_blocks).  Columns without a filter in `to`,
// or whose filter in `from` has other probes or more blocks, are left out:
// the caller makes `to` from the sources' headers (merged_group_init).
void group_image_merge_page(uint8_t *image, const FilterGroupHeader &to,
                            const FilterGroupHeader &from, uint32_t region_page,
                            const uint8_t *rows, const int16_t slot_map[kGroupSlots]) noexcept;

// Groups composed from others row by row, streaming (a build's groups of
// many segments, from each segment's filters made alone): group `to`
// (its header from the sources', merged_group_init) takes source i's
// slots s at to-slot slot_base + s.  Block row t of a column of `to` holds
// what the source blocks its keys fall into held (filter_widened_blocks
// read backwards: a widened block's keys came from one or two source
// blocks), so rows [first, first + n) of `to` need a window of each
// source's rows, given to group_rows_compose as it lies on its pages.
struct GroupRowsSource {
    const FilterGroupHeader *header;
    const uint8_t *rows;  // its rows first_row .. end_row - 1, back to back
    uint32_t first_row;
    uint32_t end_row;
    uint32_t slot_base;
};

// The window of `from`'s rows that rows [first, first + n) of `to` need:
// [*first_row, *end_row), empty (0, 0) when they need none.
void group_source_window(const FilterGroupHeader &to, uint32_t first, uint32_t n,
                         const FilterGroupHeader &from, uint32_t *first_row,
                         uint32_t *end_row) noexcept;

// Writes rows [first, first + n) of `to` to out (n * group_row_bytes(to)
// bytes) from the sources' windows.  False, out undefined, when a source
// cannot widen into `to` (a column filtered in `to` with other probes or
// fewer blocks, or none, in the source: its keys would be lost), its slots
// pass to's capacity, or a row it needs lies outside its window.
bool group_rows_compose(uint8_t *out, const FilterGroupHeader &to, uint32_t first, uint32_t n,
                        const GroupRowsSource *sources, uint32_t nsources) noexcept;

// The header of a merged segment's group of `slots` slots (1..kGroupSlots)
// from its sources' group headers: a column has a filter only where every
// source has one with the same probes, of the most blocks any has.
void merged_group_init(FilterGroupHeader *h, const FilterGroupHeader *sources, uint32_t nsources,
                       uint32_t ncolumns, uint32_t slots) noexcept;

// Lays an image out again for a capacity of h->slots_taken slots (a group
// that will take no more: the build's last), in place, and sets the
// header's capacity and region pages.
void group_image_shrink(uint8_t *image, FilterGroupHeader *h) noexcept;

// Writes the header (its check set), and region page i (its rows from
// `rows`, group_rows_per_page of them, fewer on the last page), onto
// initialised pages.
// A listed group's header page takes its region pages' blocks (h.flags
// kGroupListed: region_blocks[0 .. h.region_pages)).
void filter_group_page_fill(uint8_t *page, const FilterGroupHeader &h,
                            const uint32_t *region_blocks = nullptr) noexcept;
void filter_page_fill(uint8_t *page, const FilterGroupHeader &h, const uint8_t *rows,
                      uint32_t nrows, uint32_t region_page) noexcept;

// The header of a page that check_filter_group_page passed.
inline const FilterGroupHeader *filter_group_header(const uint8_t *page) noexcept
{
    return reinterpret_cast<const FilterGroupHeader *>(page + kPageHeaderSize);
}

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
    BadSegment,    // a segment header of another segment, or fields out of range
    BadSegmentSum, // a segment header that does not add up to its sum
    BadTidPage,    // a TID page of another segment, or groups out of place
    BadTidBytes,   // TID bytes do not add up to the page's sum
    BadDirectory,  // the metapage's directory or pending list is damaged
    BadFilter,     // a filter group page of another group, or fields out of range
    BadFilterBits, // filter bytes that do not add up to the page's sum
    BadLive,       // a live-bits page of another segment or row count
    BadLiveBits,   // live bits do not add up to the page's sum
    BadKeyPage,    // a key page of another segment, or rows out of place
    BadKeyBytes,   // filter keys that do not add up to the page's sum
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
PageProblem check_row_page_tids(const uint8_t *page, const RowPageGeometry &g) noexcept;

// Whether a check of a slice, live or TID page reads the whole payload
// for its sum (Verify) or only the fields that say what the page is
// (Trust): for a caller that verified this same page image before, known
// by its LSN, as data checksums are verified once per read from disk.
enum class Sums { Verify, Trust };

// Checks a slice page: slice `slice` of segment `segment_id`, holding
// `rows` rows, whose words add up to its sum.
PageProblem check_slice_page(const uint8_t *page, uint16_t rows, uint16_t slice,
                             uint32_t segment_id, Sums sums = Sums::Verify) noexcept;

// Checks a segment header page, read from block header_block: segment
// `segment_id` of `rows` rows, its slices from first_slice
// (slices_per_page as its entry says), for an index of `nslices` bits,
// `ncolumns` columns and `nblocks` blocks: every block it names within
// the index, key pages (if any) as many as its rows' keys take and ending
// right before the header, every group in place.  Sums::Trust (a page
// this backend checked whole at its LSN) skips what depends on its bytes
// alone: the sum and the groups' order.
PageProblem check_segment_page(const uint8_t *page, uint32_t segment_id, uint16_t rows,
                               uint32_t first_slice, uint32_t nslices, uint16_t slices_per_page,
                               uint32_t ncolumns, uint32_t header_block, uint32_t nblocks,
                               Sums sums = Sums::Verify) noexcept;
// Checks page `page_index` of a segment's TIDs, and that the groups the
// header places on it lie within its bytes.  Sums::Trust (a page this
// backend checked whole at its LSN, against this segment's header, which
// never changes) skips the sum and the groups.
PageProblem check_tid_page(const uint8_t *page, const SegmentHeader &header,
                           uint16_t page_index, Sums sums = Sums::Verify) noexcept;
// Checks key page `page_index` of segment `segment_id` (of `rows` rows,
// ncolumns keys each).
PageProblem check_key_page(const uint8_t *page, uint32_t segment_id, uint16_t rows,
                           uint16_t ncolumns, uint16_t page_index,
                           Sums sums = Sums::Verify) noexcept;
// The keys of key page `page` (checked): its rows' keys, row after row.
inline const uint8_t *key_page_keys(const uint8_t *page) noexcept
{
    return page + kPageHeaderSize;
}
// Checks a segment's live page.
PageProblem check_live_page(const uint8_t *page, uint16_t rows, uint32_t segment_id,
                            Sums sums = Sums::Verify) noexcept;
// Checks a filter group's header page: group `group_id` of an index of
// `ncolumns` columns, its region pages within the index's `nblocks` blocks
// when the header is at `header_block`.
PageProblem check_filter_group_page(const uint8_t *page, uint32_t group_id, uint32_t ncolumns,
                                    uint32_t header_block, uint32_t nblocks) noexcept;
// Checks a pending group's header page likewise: its slots' pages and links
// within the index, none the header.
PageProblem check_pending_group_page(const uint8_t *page, uint32_t group_id, uint32_t ncolumns,
                                     uint32_t header_block, uint32_t nblocks) noexcept;
// Checks region page `region_page` of the group whose header (checked) is h.
PageProblem check_filter_page(const uint8_t *page, const FilterGroupHeader &h,
                              uint32_t region_page, Sums sums = Sums::Verify) noexcept;
// A free page (nothing points at it).
PageProblem check_free_page(const uint8_t *page) noexcept;
// The segment a page belongs to if it is a bloomidx slice, header, live or
// TID page (segment ids start at 1), else 0.
uint32_t segment_page_owner(const uint8_t *page) noexcept;
// Where a filter group page says it lies in its group (0 the header, 1 + i
// region page i), its group's id in *group_id; -1 if it is none.
int64_t filter_page_place(const uint8_t *page, uint32_t *group_id) noexcept;
// Marks an initialised page free.
void free_page_fill(uint8_t *page) noexcept;
// Marks an initialised (or free) page as listed: free, on the metapage's
// free list, and so no page for an insert to take.
void listed_page_fill(uint8_t *page) noexcept;
PageProblem check_listed_page(const uint8_t *page) noexcept;

// Checks a metapage.
PageProblem check_meta_page(const uint8_t *page) noexcept;

// Words for error messages.
const char *page_problem_text(PageProblem problem) noexcept;

} // namespace bloomidx
