/* Host simulator of fixed-address memories: each device address range generated code reaches through
 * STOWAGE_FIXED_ADDRESS becomes a zeroed host array, found again by address on later calls. Pools described with
 * stowage_sim_pool (one copy per core when they have a per-core stride) are bounds-checked: a DMA, mvin or mvout
 * touching a pool must lie inside it (inside one core's copy), else the program aborts naming the pool. Host code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_accel.h"
#include "stowage_hal.h"


typedef struct {
  uintptr_t base;
  size_t bytes;
  unsigned char* host;
} stowage_sim_region;

/* A described pool: device range of copy 0, the per-core stride and copies, and where its host memory is. */
typedef struct {
  char name[64];
  uintptr_t base;
  size_t bytes, stride;
  int copies;
  unsigned char* host; /* host memory of device address `base` */
} stowage_sim_pool_entry;

/* Both lists grow as boards describe them (a pool with many non-contiguous banks is one pool per bank). */
static stowage_sim_region* regions;
static int region_count, region_capacity;
static stowage_sim_pool_entry* pools;
static int pool_count, pool_capacity;

/* `list` (of `count` elements of `size` bytes, room for `*capacity`) with room for one more: the same pointer, or
 * a larger copy (64 elements, then doubling). Under the simulator's lock; fails naming `what` without memory. */
static void* reserve_one_locked(void* list, int count, int* capacity, size_t size, const char* what) {
  int cap;
  void* grown;
  if (count < *capacity) return list;
  cap = *capacity > 0 ? *capacity * 2 : 64;
  grown = realloc(list, (size_t)cap * size);
  if (grown == NULL) {
    sim_unlock();
    sim_fail("out of memory for %d %s", cap, what);
  }
  *capacity = cap;
  return grown;
}

/* Under the simulator's lock. */
static void* map_locked(uintptr_t address, size_t bytes) {
  int i;
  const uintptr_t end = address + (bytes > 0u ? bytes : 1u);
  for (i = 0; i < region_count; ++i) {
    const stowage_sim_region* r = &regions[i];
    const uintptr_t rend = r->base + r->bytes;
    if (address >= r->base && end <= rend) return r->host + (address - r->base);
    if (address < rend && end > r->base) {
      int p;
      const char* name = "unnamed";
      for (p = 0; p < pool_count; ++p)
        if (pools[p].host == r->host + (pools[p].base - r->base)) name = pools[p].name;
      sim_unlock();
      sim_fail("device range [0x%lx, 0x%lx) straddles the mapped region [0x%lx, 0x%lx) (pool '%s')",
               (unsigned long)address, (unsigned long)end, (unsigned long)r->base, (unsigned long)rend, name);
    }
  }
  regions = (stowage_sim_region*)reserve_one_locked(regions, region_count, &region_capacity, sizeof *regions,
                                                    "fixed-address regions");
  regions[region_count].base = address;
  regions[region_count].bytes = bytes > 0u ? bytes : 1u;
  regions[region_count].host = (unsigned char*)calloc(regions[region_count].bytes, 1u);
  if (regions[region_count].host == NULL) {
    sim_unlock();
    sim_fail("cannot allocate %lu bytes for device address 0x%lx", (unsigned long)bytes, (unsigned long)address);
  }
  return regions[region_count++].host;
}

void* stowage_sim_fixed_address(uintptr_t address, size_t bytes) {
  void* host;
  sim_lock();
  host = map_locked(address, bytes);
  sim_unlock();
  return host;
}

void stowage_sim_pool(const char* name, uintptr_t base, size_t bytes, size_t per_core_stride, int cores) {
  const int copies = per_core_stride != 0u ? cores : 1;
  size_t span;
  int i;
  stowage_sim_pool_entry* p;
  if (name == NULL || *name == '\0') name = "unnamed";
  if (copies < 1) sim_fail("stowage_sim_pool: pool '%s' has %d cores", name, cores);
  if (per_core_stride != 0u && per_core_stride < bytes)
    sim_fail("stowage_sim_pool: pool '%s' has per-core copies of %lu bytes only %lu bytes apart (they would overlap)",
             name, (unsigned long)bytes, (unsigned long)per_core_stride);
  span = (size_t)(copies - 1) * per_core_stride + bytes;
  sim_lock();
  for (i = 0; i < pool_count; ++i) {
    p = &pools[i];
    if (strcmp(p->name, name) != 0) continue;
    if (p->base == base && p->bytes == bytes && p->stride == per_core_stride && p->copies == copies) {
      sim_unlock();
      return; /* net_run describes its pools on every call */
    }
    sim_unlock();
    sim_fail("stowage_sim_pool: pool '%s' described twice differently (base 0x%lx, %lu bytes, then base 0x%lx, %lu "
             "bytes)",
             name, (unsigned long)p->base, (unsigned long)p->bytes, (unsigned long)base, (unsigned long)bytes);
  }
  pools = (stowage_sim_pool_entry*)reserve_one_locked(pools, pool_count, &pool_capacity, sizeof *pools, "pools");
  p = &pools[pool_count];
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", name);
  p->base = base;
  p->bytes = bytes;
  p->stride = per_core_stride;
  p->copies = copies;
  p->host = (unsigned char*)map_locked(base, span);
  ++pool_count;
  sim_unlock();
}

void sim_pools_reset(void) {
  sim_lock();
  pool_count = 0;
  sim_unlock();
}

void sim_check_access(const char* what, const void* ptr, size_t row_bytes, size_t rows, size_t stride) {
  const unsigned char* lo = (const unsigned char*)ptr;
  const unsigned char* hi;
  const sim_context* c = sim_current();
  int i;
  if (row_bytes == 0u || rows == 0u) return;
  hi = lo + (rows - 1u) * stride + row_bytes;
  sim_lock();
  for (i = 0; i < pool_count; ++i) {
    const stowage_sim_pool_entry* p = &pools[i];
    const unsigned char* span_end = p->host + (size_t)(p->copies - 1) * p->stride + p->bytes;
    const unsigned long device_lo = (unsigned long)(p->base + (uintptr_t)(lo - p->host));
    const unsigned long device_hi = (unsigned long)(p->base + (uintptr_t)(hi - p->host));
    int copy;
    if (!(lo < span_end && hi > p->host)) continue; /* does not touch this pool */
    copy = p->copies > 1 ? (int)((size_t)(lo - p->host) / p->stride) : 0;
    if (lo < p->host || copy >= p->copies || hi > p->host + (size_t)copy * p->stride + p->bytes) {
      const unsigned long copy_lo = (unsigned long)(p->base + (uintptr_t)copy * p->stride);
      sim_unlock();
      if (lo < p->host)
        sim_fail("%s [0x%lx, 0x%lx) starts %lu bytes before pool '%s' [0x%lx, 0x%lx)", what,
                 (unsigned long)(p->base - (uintptr_t)(p->host - lo)), device_hi, (unsigned long)(p->host - lo),
                 p->name, (unsigned long)p->base, (unsigned long)(p->base + p->bytes));
      if (p->copies > 1)
        sim_fail("%s [0x%lx, 0x%lx) is not inside one copy of pool '%s' (core %d's copy is [0x%lx, 0x%lx))", what,
                 device_lo, device_hi, p->name, copy, copy_lo, copy_lo + (unsigned long)p->bytes);
      sim_fail("%s [0x%lx, 0x%lx) runs %lu bytes past the end of pool '%s' [0x%lx, 0x%lx)", what, device_lo,
               device_hi, (unsigned long)(device_hi - (unsigned long)(p->base + p->bytes)), p->name,
               (unsigned long)p->base, (unsigned long)(p->base + p->bytes));
    }
    if (p->copies > 1 && c->run != NULL && c->core < p->copies && copy != c->core) {
      sim_unlock();
      sim_fail("%s [0x%lx, 0x%lx) by core %d of target %d is in core %d's copy of pool '%s' (each core has its own)",
               what, device_lo, device_hi, c->core, c->target, copy, p->name);
    }
  }
  sim_unlock();
}
