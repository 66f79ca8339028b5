// Included last by every translation unit of src/core/: the core is pure C++
// and must build without PostgreSQL, so seeing postgres.h here is a bug.
#pragma once

#ifdef POSTGRES_H
#define BLOOMIDX_CORE_SEES_POSTGRES 1
#else
#define BLOOMIDX_CORE_SEES_POSTGRES 0
#endif
static_assert(!BLOOMIDX_CORE_SEES_POSTGRES,
              "src/core/ must not include postgres.h: keep PostgreSQL in the glue");
