/* Host simulator of fixed-address memories: each device address range generated code reaches through
 * STOWAGE_FIXED_ADDRESS becomes a zeroed host array, found again by address on later calls. Host code: it
 * may allocate and print. */
#include <stdio.h>
#include <stdlib.h>

#include "stowage_hal.h"

#define STOWAGE_SIM_MAX_REGIONS 64

typedef struct {
  uintptr_t base;
  size_t bytes;
  unsigned char* host;
} stowage_sim_region;

static stowage_sim_region regions[STOWAGE_SIM_MAX_REGIONS];
static int region_count;

void* stowage_sim_fixed_address(uintptr_t address, size_t bytes) {
  int i;
  const uintptr_t end = address + (bytes > 0u ? bytes : 1u);
  for (i = 0; i < region_count; ++i) {
    const stowage_sim_region* r = &regions[i];
    const uintptr_t rend = r->base + r->bytes;
    if (address >= r->base && end <= rend) return r->host + (address - r->base);
    if (address < rend && end > r->base) {
      fprintf(stderr,
              "stowage sim: device range [0x%lx, 0x%lx) straddles the mapped region [0x%lx, 0x%lx)\n",
              (unsigned long)address, (unsigned long)end, (unsigned long)r->base, (unsigned long)rend);
      abort();
    }
  }
  if (region_count == STOWAGE_SIM_MAX_REGIONS) {
    fprintf(stderr, "stowage sim: more than %d fixed-address regions\n", STOWAGE_SIM_MAX_REGIONS);
    abort();
  }
  regions[region_count].base = address;
  regions[region_count].bytes = bytes > 0u ? bytes : 1u;
  regions[region_count].host = (unsigned char*)calloc(regions[region_count].bytes, 1u);
  if (regions[region_count].host == NULL) {
    fprintf(stderr, "stowage sim: cannot allocate %lu bytes for device address 0x%lx\n", (unsigned long)bytes,
            (unsigned long)address);
    abort();
  }
  return regions[region_count++].host;
}
