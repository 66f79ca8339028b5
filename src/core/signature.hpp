// Signatures: a row's Bloom filter, stored as a byte string of
// signature_bytes(bits) bytes, bit i at byte i/8, position i%8.
//
// A query is checked with 64-bit loads.  The bytes of a signature are
// covered by 8-byte words at offsets 0, 8, 16, ... and one last word that
// ends exactly at the signature's end; where it overlaps the word before
// it, the query's bits are left to that word, so each bit is tested by
// exactly one word.  So no load ever reads past the signature, no padding
// is stored, and only the query's non-zero words are tested, cheapest
// first out.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace bloomidx {

constexpr int kMaxSignatureBits = 4096;
constexpr int kMaxSignatureBytes = kMaxSignatureBits / 8;
constexpr int kMaxColumnBits = 4095;
constexpr int kMaxColumns = 32;

// Storage rounds the asked number of bits up to the next 16 bits, as
// contrib/bloom does, so an index is never larger than contrib/bloom's.
// Bit positions always stay below the asked number of bits.
constexpr int signature_bytes(int bits) { return ((bits + 15) / 16) * 2; }

inline void signature_set_bit(uint8_t *sig, uint32_t pos) noexcept
{
    sig[pos >> 3] = static_cast<uint8_t>(sig[pos >> 3] | (1u << (pos & 7)));
}

inline bool signature_test_bit(const uint8_t *sig, uint32_t pos) noexcept
{
    return (sig[pos >> 3] >> (pos & 7)) & 1u;
}

inline uint64_t load_u64(const uint8_t *p) noexcept
{
    uint64_t v;
    std::memcpy(&v, p, sizeof v); // one unaligned load on x86-64
    return v;
}

// Words of 8 bytes that cover a signature of nbytes bytes (one for a
// signature shorter than 8 bytes, loaded alone).
constexpr int signature_words(int nbytes) { return nbytes < 8 ? 1 : (nbytes + 7) / 8; }

// The query bits of one scan, prepared for fast subset tests.  Plain data
// (trivial), so that it may live in memory PostgreSQL allocates: build()
// sets every member a test reads.
class SignatureMask {
public:
    // Takes a query signature of nbytes bytes (2 <= nbytes <= 512).
    void build(const uint8_t *query, int nbytes) noexcept
    {
        nbytes_ = nbytes;
        nwords_ = 0;
        if (nbytes < 8) {
            uint64_t w = 0;
            std::memcpy(&w, query, static_cast<size_t>(nbytes));
            short_ = true;
            if (w != 0)
                add(0, w);
            return;
        }
        short_ = false;
        int last = nbytes - 8;
        int off = 0;
        for (; off < last; off += 8)
            add(off, load_u64(query + off));
        // The bytes of the last word below `off` belong to the word before.
        uint8_t tail[8];
        std::memcpy(tail, query + last, sizeof tail);
        std::memset(tail, 0, static_cast<size_t>(off - last));
        add(last, load_u64(tail));
        // The word with the most query bits is the likeliest to fail on a
        // non-matching signature: test it first.
        for (int i = 1; i < nwords_; i++) {
            if (__builtin_popcountll(word_[i]) > __builtin_popcountll(word_[0])) {
                uint64_t w = word_[0];
                uint16_t o = offset_[0];
                word_[0] = word_[i];
                offset_[0] = offset_[i];
                word_[i] = w;
                offset_[i] = o;
            }
        }
    }

    // True when every query bit is set in sig: (sig & q) == q.
    bool matches(const uint8_t *sig) const noexcept
    {
        if (short_) {
            if (nwords_ == 0)
                return true;
            uint64_t w = 0;
            std::memcpy(&w, sig, static_cast<size_t>(nbytes_));
            return (w & word_[0]) == word_[0];
        }
        for (int i = 0; i < nwords_; i++)
            if ((load_u64(sig + offset_[i]) & word_[i]) != word_[i])
                return false;
        return true;
    }

    // Checks count signatures stored back to back; writes the indexes of
    // the matching ones to out (room for count) and returns how many.
    // The scan's hot loop: the mask is copied to locals first (out is a
    // uint16_t array, which could alias offset_, so the compiler would
    // reload the mask after every store), and one or two words, the usual
    // case, are unrolled.
    int match_array(const uint8_t *sigs, int count, uint16_t *out) const noexcept
    {
        const int nbytes = nbytes_;
        const int nwords = nwords_;
        int n = 0;
        if (short_ || nwords > 2) {
            const uint8_t *sig = sigs;
            for (int i = 0; i < count; i++, sig += nbytes)
                if (matches(sig))
                    out[n++] = static_cast<uint16_t>(i);
            return n;
        }
        if (nwords == 0) {
            for (int i = 0; i < count; i++)
                out[i] = static_cast<uint16_t>(i);
            return count;
        }
        const uint8_t *first = sigs + offset_[0];
        const uint64_t w0 = word_[0];
        if (nwords == 1) {
            for (int i = 0; i < count; i++, first += nbytes)
                if ((load_u64(first) & w0) == w0)
                    out[n++] = static_cast<uint16_t>(i);
            return n;
        }
        const int delta = offset_[1] - offset_[0];
        const uint64_t w1 = word_[1];
        for (int i = 0; i < count; i++, first += nbytes)
            if ((load_u64(first) & w0) == w0 && (load_u64(first + delta) & w1) == w1)
                out[n++] = static_cast<uint16_t>(i);
        return n;
    }

    bool empty() const noexcept { return nwords_ == 0; }
    int bytes() const noexcept { return nbytes_; }

    // The query's non-zero words, in the order matches() tests them:
    // word(i) at byte offset word_offset(i) of a signature.
    int words() const noexcept { return nwords_; }
    uint64_t word(int i) const noexcept { return word_[i]; }
    uint16_t word_offset(int i) const noexcept { return offset_[i]; }

private:
    void add(int off, uint64_t w) noexcept
    {
        if (w == 0)
            return;
        offset_[nwords_] = static_cast<uint16_t>(off);
        word_[nwords_] = w;
        nwords_++;
    }

    int nbytes_;
    int nwords_;
    bool short_;
    uint16_t offset_[kMaxSignatureBytes / 8];
    uint64_t word_[kMaxSignatureBytes / 8];
};
static_assert(std::is_trivial<SignatureMask>::value, "SignatureMask is plain data");

} // namespace bloomidx
