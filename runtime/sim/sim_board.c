/* Host simulator board description: stowage_sim_target and stowage_sim_dma record what the generated code
 * says about each target (name, cores, engine dim, DMA parameters); net_run repeats them on every call. Host code. */
#include <stdio.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_accel.h"

void stowage_sim_target(int target, const char* name, int cores, int engine_dim) {
  sim_target* t = sim_target_at(target, "stowage_sim_target");
  if (cores < 1 || cores > STOWAGE_SIM_MAX_CORES)
    sim_fail("stowage_sim_target: target %d ('%s') has %d cores; the simulator handles 1..%d", target,
             name != NULL ? name : "?", cores, STOWAGE_SIM_MAX_CORES);
  if (engine_dim < 0) sim_fail("stowage_sim_target: target %d has a negative engine dim (%d)", target, engine_dim);
  t->described = 1;
  snprintf(t->name, sizeof t->name, "%s", name != NULL && *name ? name : "target");
  t->cores = cores;
  t->engine_dim = engine_dim;
}

void stowage_sim_dma(int target, int channels, double bytes_per_cycle, double setup_cycles) {
  sim_target* t = sim_target_at(target, "stowage_sim_dma");
  if (channels < 1 || channels > STOWAGE_SIM_MAX_CHANNELS)
    sim_fail("stowage_sim_dma: target %d has %d DMA channels; the simulator handles 1..%d", target, channels,
             STOWAGE_SIM_MAX_CHANNELS);
  if (!(bytes_per_cycle > 0.0))
    sim_fail("stowage_sim_dma: target %d moves %g bytes per cycle; it must be positive", target, bytes_per_cycle);
  if (!(setup_cycles >= 0.0))
    sim_fail("stowage_sim_dma: target %d has %g setup cycles; it must be 0 or more", target, setup_cycles);
  t->dma_described = 1;
  t->dma_channels = channels;
  t->dma_bytes_per_cycle = bytes_per_cycle;
  t->dma_setup_cycles = setup_cycles;
}
