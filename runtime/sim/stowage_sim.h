/* stowage_sim.h: host-only API of the simulator in runtime/sim (never compiled for a device): reset it, read its
 * totals, print its statistics and write a Chrome trace of a simulated run. Used by the host harness and tests. */
#ifndef STOWAGE_SIM_H
#define STOWAGE_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the simulator handles: targets a board may describe (its [[targets]]), cores per target, DMA channels per
 * core. `stowage run` checks a board against them before building (the generated C itself has no such limits). */
#define STOWAGE_SIM_MAX_TARGETS 16
#define STOWAGE_SIM_MAX_CORES 64
#define STOWAGE_SIM_MAX_CHANNELS 64

/* Forgets every clock, event, counter, described target and described pool (host memory of fixed-address
 * regions stays mapped). Call it from the host thread, outside stowage_run_on_cores. */
void stowage_sim_reset(void);

/* The calling core's clock (the host's outside stowage_run_on_cores), in cycles. */
uint64_t stowage_sim_now(void);

/* Totals of the run so far. Busy times are unions of intervals over every track of that kind: compute (core
 * kernels charged with STOWAGE_SIM_COMPUTE and the engine's execute queue) and DMA (core DMA channels and the
 * engine's load and store queues). overlap_fraction = overlap_cycles / dma_busy_cycles (0 with no DMA). */
typedef struct {
  uint64_t total_cycles;      /* the latest time anything ends */
  uint64_t compute_busy_cycles;
  uint64_t dma_busy_cycles;
  uint64_t overlap_cycles;    /* DMA busy time during which something computes */
  double overlap_fraction;
  uint64_t dma_bytes;         /* core DMA transfers and engine mvin/mvout */
  uint64_t dma_transfers;
  uint64_t stall_cycles;      /* cores waiting for DMA (stowage_dma_wait) and for the engine (fence) */
  uint64_t sync_wait_cycles;  /* cores waiting at barriers, callers waiting for stowage_run_on_cores */
} stowage_sim_totals;
void stowage_sim_get_totals(stowage_sim_totals* totals);
uint64_t stowage_sim_total_cycles(void);
double stowage_sim_overlap_fraction(void);

/* Per core of a target (0 when that core never ran): cycles charged computing, its clock, DMA stall cycles,
 * barrier wait cycles. */
uint64_t stowage_sim_core_compute_cycles(int target, int core);
uint64_t stowage_sim_core_clock(int target, int core);
uint64_t stowage_sim_core_stall_cycles(int target, int core);
uint64_t stowage_sim_core_barrier_wait_cycles(int target, int core);

/* Per engine queue: 0 load (mvin), 1 execute, 2 store (mvout): busy cycles, operations, bytes moved. */
enum { STOWAGE_SIM_LOAD = 0, STOWAGE_SIM_EXECUTE = 1, STOWAGE_SIM_STORE = 2 };
uint64_t stowage_sim_engine_busy_cycles(int queue);
uint64_t stowage_sim_engine_operations(int queue);
uint64_t stowage_sim_engine_bytes(int queue);

/* The engine's cycle formula for one compute call: ceil(n / dim) * ceil(k / dim) * (m + dim) (0 when a size is 0). */
uint64_t stowage_sim_engine_cycles(int dim, uint64_t m, uint64_t n, uint64_t k);

/* The name a target was described with ("host" for an undescribed target 0). */
const char* stowage_sim_target_name(int target);

/* Layer spans: generated code calls stowage_sim_layer_begin / _end (host thread) around each offloaded (tiled)
 * layer and stowage_sim_cpu_layer_begin / _end around each layer the CPU runs untiled; a span is the host clock
 * from its begin to its end (the layer's fence or join included). In order of begin. The trace draws them on two
 * tracks of target 0's process, "CPU layers" and "offloaded layers" (category "layer"). */
void stowage_sim_layer_begin(const char* name);
void stowage_sim_cpu_layer_begin(const char* name);
void stowage_sim_layer_end(const char* name);
size_t stowage_sim_layer_count(void);
const char* stowage_sim_layer_name(size_t i); /* NULL past the end */
uint64_t stowage_sim_layer_start(size_t i);
uint64_t stowage_sim_layer_cycles(size_t i);
int stowage_sim_layer_on_cpu(size_t i); /* 1 for a stowage_sim_cpu_layer_begin span, else 0 (and past the end) */

/* Human-readable statistics: total cycles, busy and stall cycles per core and engine queue, DMA bytes, overlap,
 * then one line per layer span ("  layer 'NAME': N cycles from S"). */
void stowage_sim_print_stats(FILE* out);

/* Writes the Chrome trace (JSON, viewable in Perfetto or chrome://tracing) to `path`; 1 on success, 0 (with a
 * message on stderr) when the file cannot be written. */
int stowage_sim_write_trace(const char* path);

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_SIM_H */
