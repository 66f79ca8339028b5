// Reference implementations the unit tests hold the core's fast paths to:
// written the slow, obvious way, bit by bit.
#pragma once

#include <cstdint>

#include "core/signature.hpp"

namespace bloomidx {
namespace reference {

// (sig & q) == q, bit by bit, over the nbytes stored bytes.
inline bool matches(const uint8_t *sig, const uint8_t *q, int nbytes)
{
    for (uint32_t pos = 0; pos < static_cast<uint32_t>(nbytes) * 8; pos++)
        if (signature_test_bit(q, pos) && !signature_test_bit(sig, pos))
            return false;
    return true;
}

} // namespace reference
} // namespace bloomidx
