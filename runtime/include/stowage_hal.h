/* stowage_hal.h: the hardware abstraction generated code calls to reach device memory. On a device,
 * STOWAGE_FIXED_ADDRESS is the address itself; on the host (STOWAGE_HOST_SIM) the simulator in runtime/sim
 * maps each fixed-address pool to host memory, so the same generated C runs unchanged. C99. */
#ifndef STOWAGE_HAL_H
#define STOWAGE_HAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(STOWAGE_HOST_SIM)
/* Host memory standing for device bytes [address, address + bytes). The first call for a range creates it
 * (zeroed); later calls for the same or an inner range return the same memory. A range that straddles the
 * end of a known region aborts with the address and the region's name. */
void* stowage_sim_fixed_address(uintptr_t address, size_t bytes);
#define STOWAGE_FIXED_ADDRESS(address, bytes) stowage_sim_fixed_address((uintptr_t)(address), (size_t)(bytes))
#elif !defined(STOWAGE_FIXED_ADDRESS)
/* A device: fixed pools are plain addresses. Define STOWAGE_FIXED_ADDRESS before including this header to
 * translate them (an MMU mapping, a different address space for the host CPU). */
#define STOWAGE_FIXED_ADDRESS(address, bytes) ((void*)(uintptr_t)(address))
#endif

/* Guard mode (`stowage compile --guard`): called when a check fails, with the tensor's name, what was wrong
 * and the step. Must not return. The host simulator prints the message and aborts; on a device, the
 * application defines it (log, then halt or reset). */
void stowage_guard_fail(const char* tensor, const char* what, int step);

#if defined(STOWAGE_PROFILE_LAYERS)
/* Per-layer profile (-DSTOWAGE_PROFILE_LAYERS): generated code calls this after each CPU layer with the layer's
 * name and multiply-accumulates. runtime/firmware/fw_profile.c records the instructions since the previous call;
 * an application may define it (read its cycle counter). */
void stowage_profile_layer(const char* layer, unsigned long macs);
#endif

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_HAL_H */
