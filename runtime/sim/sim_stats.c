/* Host simulator statistics: total cycles, busy time per core and engine queue, DMA volume, stalls, and the
 * share of DMA busy time that overlaps compute (unions of the trace's intervals), printed or read by getters. */
#include <stdio.h>
#include <stdlib.h>

#include "sim_state.h"
#include "stowage_sim.h"

typedef struct {
  uint64_t start, end;
} interval;

static int compare_intervals(const void* pa, const void* pb) {
  const interval* a = (const interval*)pa;
  const interval* b = (const interval*)pb;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  return 0;
}

/* Sorts and merges `v` in place into disjoint intervals; returns how many remain. */
static size_t merge(interval* v, size_t n) {
  size_t i, out = 0;
  if (n == 0u) return 0u;
  qsort(v, n, sizeof *v, compare_intervals);
  for (i = 1; i < n; ++i) {
    if (v[i].start <= v[out].end) {
      if (v[i].end > v[out].end) v[out].end = v[i].end;
    } else {
      v[++out] = v[i];
    }
  }
  return out + 1u;
}

static uint64_t length(const interval* v, size_t n) {
  uint64_t sum = 0;
  size_t i;
  for (i = 0; i < n; ++i) sum += v[i].end - v[i].start;
  return sum;
}

static uint64_t intersection(const interval* a, size_t na, const interval* b, size_t nb) {
  uint64_t sum = 0;
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    const uint64_t lo = a[i].start > b[j].start ? a[i].start : b[j].start;
    const uint64_t hi = a[i].end < b[j].end ? a[i].end : b[j].end;
    if (hi > lo) sum += hi - lo;
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return sum;
}

void stowage_sim_get_totals(stowage_sim_totals* totals) {
  size_t count = 0, i, nd = 0, nc = 0;
  sim_event* events = sim_collect_events(&count);
  interval* dma = (interval*)malloc((count > 0u ? count : 1u) * sizeof *dma);
  interval* compute = (interval*)malloc((count > 0u ? count : 1u) * sizeof *compute);
  int t, k, q;
  if (dma == NULL || compute == NULL) sim_fail("out of memory for the statistics of %lu events", (unsigned long)count);
  totals->total_cycles = sim_engine_busy_until();
  totals->dma_bytes = totals->dma_transfers = totals->stall_cycles = totals->sync_wait_cycles = 0;
  for (i = 0; i < count; ++i) {
    const sim_event* e = &events[i];
    if (e->end > totals->total_cycles) totals->total_cycles = e->end;
    if (e->end == e->start) continue;
    if (e->kind == SIM_KIND_DMA) {
      dma[nd].start = e->start;
      dma[nd++].end = e->end;
    } else if (e->kind == SIM_KIND_COMPUTE) {
      compute[nc].start = e->start;
      compute[nc++].end = e->end;
    }
  }
  for (t = 0; t < STOWAGE_SIM_MAX_TARGETS; ++t)
    for (k = 0; k < STOWAGE_SIM_MAX_CORES; ++k) {
      const sim_core_state* s = sim_targets[t].core[k];
      if (s == NULL) continue;
      if (s->clock > totals->total_cycles) totals->total_cycles = s->clock;
      totals->dma_bytes += s->dma_bytes;
      totals->dma_transfers += s->dma_transfers;
      totals->stall_cycles += s->dma_stall_cycles + s->fence_wait_cycles;
      totals->sync_wait_cycles += s->barrier_wait_cycles;
    }
  for (q = 0; q < SIM_QUEUES; ++q)
    if (q != SIM_QUEUE_EXEC) {
      totals->dma_bytes += stowage_sim_engine_bytes(q);
      totals->dma_transfers += stowage_sim_engine_operations(q);
    }
  nd = merge(dma, nd);
  nc = merge(compute, nc);
  totals->dma_busy_cycles = length(dma, nd);
  totals->compute_busy_cycles = length(compute, nc);
  totals->overlap_cycles = intersection(dma, nd, compute, nc);
  totals->overlap_fraction =
      totals->dma_busy_cycles > 0u ? (double)totals->overlap_cycles / (double)totals->dma_busy_cycles : 0.0;
  free(dma);
  free(compute);
  free(events);
}

uint64_t stowage_sim_total_cycles(void) {
  stowage_sim_totals t;
  stowage_sim_get_totals(&t);
  return t.total_cycles;
}

double stowage_sim_overlap_fraction(void) {
  stowage_sim_totals t;
  stowage_sim_get_totals(&t);
  return t.overlap_fraction;
}

static const sim_core_state* core_or_null(int target, int core) {
  if (target < 0 || target >= STOWAGE_SIM_MAX_TARGETS || core < 0 || core >= STOWAGE_SIM_MAX_CORES) return NULL;
  return sim_targets[target].core[core];
}

uint64_t stowage_sim_core_compute_cycles(int target, int core) {
  const sim_core_state* s = core_or_null(target, core);
  return s != NULL ? s->compute_cycles : 0u;
}

uint64_t stowage_sim_core_clock(int target, int core) {
  const sim_core_state* s = core_or_null(target, core);
  return s != NULL ? s->clock : 0u;
}

uint64_t stowage_sim_core_stall_cycles(int target, int core) {
  const sim_core_state* s = core_or_null(target, core);
  return s != NULL ? s->dma_stall_cycles + s->fence_wait_cycles : 0u;
}

uint64_t stowage_sim_core_barrier_wait_cycles(int target, int core) {
  const sim_core_state* s = core_or_null(target, core);
  return s != NULL ? s->barrier_wait_cycles : 0u;
}

static double percent(uint64_t part, uint64_t whole) { return whole > 0u ? 100.0 * (double)part / (double)whole : 0.0; }

void stowage_sim_print_stats(FILE* out) {
  stowage_sim_totals totals;
  int t, k, engine_shown = 0;
  size_t i;
  stowage_sim_get_totals(&totals);
  fprintf(out, "simulated: %llu cycles\n", (unsigned long long)totals.total_cycles);
  fprintf(out, "  compute busy %llu cycles, DMA busy %llu cycles, overlap %llu cycles (%.1f%% of DMA busy time)\n",
          (unsigned long long)totals.compute_busy_cycles, (unsigned long long)totals.dma_busy_cycles,
          (unsigned long long)totals.overlap_cycles, 100.0 * totals.overlap_fraction);
  fprintf(out, "  DMA %llu bytes in %llu transfers; stalls %llu cycles (DMA waits, fences); %llu cycles at barriers and joins\n",
          (unsigned long long)totals.dma_bytes, (unsigned long long)totals.dma_transfers,
          (unsigned long long)totals.stall_cycles, (unsigned long long)totals.sync_wait_cycles);
  for (t = 0; t < STOWAGE_SIM_MAX_TARGETS; ++t) {
    const sim_target* target = &sim_targets[t];
    for (k = 0; k < STOWAGE_SIM_MAX_CORES; ++k) {
      const sim_core_state* s = target->core[k];
      if (s == NULL || !s->used) continue;
      fprintf(out,
              "  %s core %d: compute %llu cycles (%.1f%%), DMA %llu bytes in %llu transfers, DMA stall %llu, fence "
              "wait %llu, barrier/join wait %llu\n",
              stowage_sim_target_name(t), k, (unsigned long long)s->compute_cycles,
              percent(s->compute_cycles, totals.total_cycles), (unsigned long long)s->dma_bytes,
              (unsigned long long)s->dma_transfers, (unsigned long long)s->dma_stall_cycles,
              (unsigned long long)s->fence_wait_cycles, (unsigned long long)s->barrier_wait_cycles);
    }
    if (target->described && target->engine_dim > 0 && !engine_shown && sim_engine_events()->count > 0u) {
      engine_shown = 1; /* the first engine target runs every engine call */
      fprintf(out,
              "  %s engine (dim %d): load %llu cycles busy (%.1f%%, %llu mvin, %llu bytes), execute %llu cycles busy "
              "(%.1f%%, %llu calls), store %llu cycles busy (%.1f%%, %llu mvout, %llu bytes)\n",
              target->name, target->engine_dim, (unsigned long long)stowage_sim_engine_busy_cycles(SIM_QUEUE_LOAD),
              percent(stowage_sim_engine_busy_cycles(SIM_QUEUE_LOAD), totals.total_cycles),
              (unsigned long long)stowage_sim_engine_operations(SIM_QUEUE_LOAD),
              (unsigned long long)stowage_sim_engine_bytes(SIM_QUEUE_LOAD),
              (unsigned long long)stowage_sim_engine_busy_cycles(SIM_QUEUE_EXEC),
              percent(stowage_sim_engine_busy_cycles(SIM_QUEUE_EXEC), totals.total_cycles),
              (unsigned long long)stowage_sim_engine_operations(SIM_QUEUE_EXEC),
              (unsigned long long)stowage_sim_engine_busy_cycles(SIM_QUEUE_STORE),
              percent(stowage_sim_engine_busy_cycles(SIM_QUEUE_STORE), totals.total_cycles),
              (unsigned long long)stowage_sim_engine_operations(SIM_QUEUE_STORE),
              (unsigned long long)stowage_sim_engine_bytes(SIM_QUEUE_STORE));
    }
  }
  for (i = 0; i < stowage_sim_layer_count(); ++i)
    fprintf(out, "  layer '%s': %llu cycles from %llu\n", stowage_sim_layer_name(i),
            (unsigned long long)stowage_sim_layer_cycles(i), (unsigned long long)stowage_sim_layer_start(i));
}
