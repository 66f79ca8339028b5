// Page deltas in Generic WAL's format (page_delta.hpp).
#include "page_delta.hpp"

#include <cstring>

#include "page_layout.hpp"
#include "core_guard.hpp"

namespace bloomidx {

uint32_t write_page_delta(const uint8_t *page, const PageRange *ranges, uint32_t n, uint8_t *out,
                          uint32_t room) noexcept
{
    uint32_t len = 0;
    for (uint32_t i = 0; i < n; i++) {
        const PageRange &r = ranges[i];
        if (uint32_t{r.offset} + r.length > kBlockSize ||
            len + page_delta_size(1, r.length) > room)
            return 0;
        std::memcpy(out + len, &r.offset, sizeof r.offset);
        std::memcpy(out + len + sizeof r.offset, &r.length, sizeof r.length);
        std::memcpy(out + len + 2 * sizeof(uint16_t), page + r.offset, r.length);
        len += page_delta_size(1, r.length);
    }
    return len;
}

} // namespace bloomidx
