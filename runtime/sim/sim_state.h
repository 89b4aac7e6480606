/* sim_state.h: the host simulator's private state shared by the runtime/sim/ files: described targets, the
 * per-core clocks and DMA channels, the calling thread's context, timed events and the memory checks. Host code. */
#ifndef STOWAGE_SIM_STATE_H
#define STOWAGE_SIM_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stowage_sim.h" /* STOWAGE_SIM_MAX_TARGETS, _CORES, _CHANNELS */

/* What a timed event is, for the statistics: compute (a core's kernel or the engine's execute queue), data
 * movement (a DMA channel or the engine's load/store queues), or a core waiting (DMA, barrier, fence, cores). */
typedef enum { SIM_KIND_COMPUTE = 0, SIM_KIND_DMA = 1, SIM_KIND_WAIT = 2 } sim_event_kind;

/* The track an event is drawn on: a core's own track, one of its DMA channels, or an engine queue. */
typedef enum { SIM_TRACK_CORE = 0, SIM_TRACK_DMA = 1, SIM_TRACK_ENGINE = 2 } sim_track_type;

/* Engine queues, in the order of stowage_sim_engine_busy_cycles (stowage_sim.h). */
enum { SIM_QUEUE_LOAD = 0, SIM_QUEUE_EXEC = 1, SIM_QUEUE_STORE = 2, SIM_QUEUES = 3 };

/* One interval of simulated time on one track. `name` is not copied (generated code passes literals). */
typedef struct {
  uint64_t start, end;
  const char* name;
  uint64_t bytes;   /* bytes moved, for DMA events */
  int target;       /* pid */
  int track_type;   /* sim_track_type */
  int core;         /* core of the target, or -1 for engine tracks */
  int lane;         /* DMA channel or engine queue; 0 on core tracks */
  int kind;         /* sim_event_kind */
} sim_event;

/* A growable list of events, owned by one thread at a time. */
typedef struct {
  sim_event* items;
  size_t count, capacity;
} sim_event_list;

/* One core of a target: its clock, DMA channels, tickets, events and counters. Touched only by the thread
 * running that core (or by the host thread for core 0 of target 0 between runs). */
typedef struct {
  uint64_t clock;
  uint64_t channel_free[STOWAGE_SIM_MAX_CHANNELS];
  uint64_t* ticket_end; /* ticket t (1-based) ends at ticket_end[t - 1] */
  size_t ticket_count, ticket_capacity;
  sim_event_list events;
  uint64_t compute_cycles, dma_stall_cycles, barrier_wait_cycles, fence_wait_cycles;
  uint64_t dma_bytes, dma_transfers;
  int used;
} sim_core_state;

/* A target as the generated code describes it (stowage_sim_target, stowage_sim_dma). */
typedef struct {
  int described;
  char name[64];
  int cores;
  int engine_dim;
  int dma_described;
  int dma_channels;
  double dma_bytes_per_cycle;
  double dma_setup_cycles;
  sim_core_state* core[STOWAGE_SIM_MAX_CORES]; /* created on first use */
} sim_target;

/* The calling thread: which target and core it is, and the state of the current stowage_run_on_cores call. */
typedef struct sim_run sim_run;
typedef struct {
  int target;
  int core;
  int cores;
  sim_core_state* state;
  sim_run* run; /* NULL on the host thread */
} sim_context;

/* ---- sim_clock.c */
extern sim_target sim_targets[STOWAGE_SIM_MAX_TARGETS];
/* The context of the calling thread (the host context outside stowage_run_on_cores). */
sim_context* sim_current(void);
void sim_set_current(sim_context* context);
/* Target `target`, checked (aborts naming the function when out of range). */
sim_target* sim_target_at(int target, const char* function);
/* Core `core` of `target`, created on first use. */
sim_core_state* sim_core_at(int target, int core);
/* Prints "stowage sim: <message>" to stderr and aborts. */
void sim_fail(const char* format, ...);
/* The simulator's global lock (pool table, region table, engine). */
void sim_lock(void);
void sim_unlock(void);

/* Records that the calling core waits from its clock until `until` (a stall named `why`), and moves its clock. */
void sim_wait_until(sim_context* c, uint64_t until, const char* why, uint64_t* counter);

/* ---- sim_trace.c */
void sim_event_push(sim_event_list* list, const sim_event* event);
void sim_event_list_free(sim_event_list* list);
/* Every event of every core and of the engine, sorted by (target, track, start, end, name): *count events,
 * allocated (free it). */
sim_event* sim_collect_events(size_t* count);

/* ---- sim_engine.c */
/* The engine's events and the time its queues are busy until (0 when there is no engine). */
sim_event_list* sim_engine_events(void);
uint64_t sim_engine_busy_until(void);
void sim_engine_reset(void);

/* ---- sim_memory.c */
/* Checks a 2-D access of `rows` rows of `row_bytes` bytes `stride` bytes apart starting at `p` against the
 * registered pools: an access touching a pool must lie inside it (inside one core's copy), else aborts naming
 * `what`, the device address and the pool. */
void sim_check_access(const char* what, const void* p, size_t row_bytes, size_t rows, size_t stride);
void sim_pools_reset(void);

/* ---- sim_layers.c */
void sim_layers_reset(void);

/* ---- sim_dma.c */
/* Cycles of one transfer of `bytes` bytes: ceil(setup) + ceil(bytes / bytes_per_cycle), 0 for an empty one. */
uint64_t sim_transfer_cycles(double setup_cycles, double bytes_per_cycle, uint64_t bytes);
/* The functional 2-D copy shared by the DMA and the engine's mvin/mvout (memmove per row). */
void sim_copy_2d(void* dst, const void* src, size_t row_bytes, size_t rows, size_t dst_stride, size_t src_stride);

#endif /* STOWAGE_SIM_STATE_H */
