#include "tid_codec.hpp"

#include <algorithm>

#include "core_guard.hpp"

namespace bloomidx {

namespace {

size_t put_varint(uint64_t v, uint8_t *out) noexcept
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    out[n++] = static_cast<uint8_t>(v);
    return n;
}

// Reads a varint of at most max_bytes bytes from in[*pos..size).
bool get_varint(const uint8_t *in, size_t size, size_t *pos, int max_bytes, uint64_t *v) noexcept
{
    uint64_t result = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*pos >= size)
            return false;
        uint8_t byte = in[(*pos)++];
        result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
        if ((byte & 0x80) == 0) {
            // A last byte of 0 after others is a longer spelling of a
            // shorter code: the encoder never writes one.
            if (byte == 0 && i > 0)
                return false;
            *v = result;
            return true;
        }
    }
    return false;
}

constexpr uint64_t zigzag(int64_t v)
{
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

constexpr int64_t unzigzag(uint64_t v)
{
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

constexpr bool offset_ok(uint64_t offset)
{
    return offset >= 1 && offset <= kMaxHeapOffset;
}

// Codes: a same-block step takes an offset delta below kMaxHeapOffset (2
// bytes at most), a block step a 33-bit zigzagged delta and the flag, a
// run's length less kMinRun one byte (a group's runs are shorter than 64).
constexpr int kMaxCodeBytes = 5;
constexpr int kMaxOffsetBytes = 2;
constexpr int kMaxRunBytes = 1;
static_assert(kTidGroupRows - 1 - kTidMinRun < 0x80, "a run's length fits one varint byte");

// Rows from `from` on (from >= 1) that each follow the row before in its
// block at the next offset: the run the encoder may write.
uint32_t run_length(const HeapTid *tids, uint32_t n, uint32_t from) noexcept
{
    uint32_t k = 0;
    while (from + k < n && tids[from + k].block == tids[from + k - 1].block &&
           tids[from + k].offset == tids[from + k - 1].offset + 1)
        k++;
    return k;
}

} // namespace

double typical_tid_bytes(double rows_per_page) noexcept
{
    const double p = rows_per_page >= 1 ? std::min<double>(rows_per_page, kMaxHeapOffset) : 1;
    const double blocks = kTidGroupRows / p;
    const double rest = std::min<double>(p - 1, 2); // a run of the block's other rows
    return (6 + 2 + blocks * (2 + rest)) / kTidGroupRows;
}

size_t tid_group_encode(const HeapTid *tids, uint32_t n, uint8_t *out, size_t cap) noexcept
{
    if (n < 1 || n > kTidGroupRows)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (!offset_ok(tids[i].offset))
            return 0;
    // Written to a bound-sized scratch first, so that a short cap never
    // sees a partial write.
    uint8_t buf[tid_group_bound(kTidGroupRows)];
    size_t len = 0;

    for (int b = 0; b < 4; b++)
        buf[len++] = static_cast<uint8_t>(tids[0].block >> (8 * b));
    buf[len++] = static_cast<uint8_t>(tids[0].offset);
    buf[len++] = static_cast<uint8_t>(tids[0].offset >> 8);
    for (uint32_t i = 1; i < n; i++) {
        const HeapTid &prev = tids[i - 1], &cur = tids[i];
        const uint32_t run = run_length(tids, n, i);
        if (run >= kTidMinRun) {
            buf[len++] = 0;
            len += put_varint(run - kTidMinRun, buf + len);
            i += run - 1;
        } else if (cur.block == prev.block && cur.offset > prev.offset) {
            len += put_varint(static_cast<uint64_t>(cur.offset - prev.offset) << 1, buf + len);
        } else {
            int64_t delta = static_cast<int64_t>(cur.block) - static_cast<int64_t>(prev.block);
            len += put_varint((zigzag(delta) << 1) | 1, buf + len);
            len += put_varint(cur.offset, buf + len);
        }
    }
    if (len > cap)
        return 0;
    for (size_t i = 0; i < len; i++)
        out[i] = buf[i];
    return len;
}

bool tid_group_decode(const uint8_t *in, size_t size, uint32_t n, HeapTid *out) noexcept
{
    if (n < 1 || n > kTidGroupRows || size < 6)
        return false;
    uint32_t block = static_cast<uint32_t>(in[0]) | static_cast<uint32_t>(in[1]) << 8 |
                     static_cast<uint32_t>(in[2]) << 16 | static_cast<uint32_t>(in[3]) << 24;
    uint64_t offset = static_cast<uint64_t>(in[4]) | static_cast<uint64_t>(in[5]) << 8;
    if (!offset_ok(offset))
        return false;
    out[0] = HeapTid{block, static_cast<uint16_t>(offset)};
    size_t pos = 6;

    for (uint32_t i = 1; i < n; i++) {
        uint64_t code;
        if (!get_varint(in, size, &pos, kMaxCodeBytes, &code))
            return false;
        if (code == 0) {
            // A run: each of its rows at the next offset of the same block.
            uint64_t more;
            if (n - i < kTidMinRun || !get_varint(in, size, &pos, kMaxRunBytes, &more) ||
                more > n - i - kTidMinRun || offset + kTidMinRun + more > kMaxHeapOffset)
                return false;
            for (uint64_t j = 0; j < kTidMinRun + more; j++)
                out[i + j] = HeapTid{block, static_cast<uint16_t>(++offset)};
            i += static_cast<uint32_t>(kTidMinRun + more) - 1;
            continue;
        }
        if ((code & 1) == 0) {
            offset += code >> 1;
            if (!offset_ok(offset))
                return false;
        } else {
            int64_t next = static_cast<int64_t>(block) + unzigzag(code >> 1);
            if (next < 0 || next > static_cast<int64_t>(UINT32_MAX))
                return false;
            block = static_cast<uint32_t>(next);
            if (!get_varint(in, size, &pos, kMaxOffsetBytes, &offset) || !offset_ok(offset))
                return false;
        }
        out[i] = HeapTid{block, static_cast<uint16_t>(offset)};
    }
    return pos == size;
}

} // namespace bloomidx
