/* Host simulator of core-driven DMA: stowage_dma_start copies at issue (bounds-checked against the fixed
 * pools) and times the transfer on the calling core's channel (start = max(core clock, channel free), length =
 * ceil(setup) + ceil(bytes / bandwidth)); stowage_dma_wait moves the core's clock to the transfer's end, counting the stall. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_accel.h"

uint64_t sim_transfer_cycles(double setup_cycles, double bytes_per_cycle, uint64_t bytes) {
  if (bytes == 0u) return 0u;
  return (uint64_t)ceil(setup_cycles) + (uint64_t)ceil((double)bytes / bytes_per_cycle);
}

void sim_copy_2d(void* dst, const void* src, size_t row_bytes, size_t rows, size_t dst_stride, size_t src_stride) {
  size_t r;
  for (r = 0; r < rows; ++r)
    memmove((unsigned char*)dst + r * dst_stride, (const unsigned char*)src + r * src_stride, row_bytes);
}

/* The DMA engine serving the calling core: its target's, or for the host thread the first described one. */
static const sim_target* dma_of(const sim_context* c) {
  const sim_target* t = &sim_targets[c->target];
  int k;
  if (t->dma_described) return t;
  if (c->run == NULL)
    for (k = 0; k < STOWAGE_SIM_MAX_TARGETS; ++k)
      if (sim_targets[k].dma_described) return &sim_targets[k];
  sim_fail("stowage_dma_start on core %d of target %d ('%s'), whose DMA was not described (the generated setup "
           "function calls stowage_sim_dma)",
           c->core, c->target, t->described ? t->name : "host");
  return NULL;
}

stowage_dma_ticket stowage_dma_start(int channel, void* dst, const void* src, size_t row_bytes, size_t rows,
                                     size_t dst_stride, size_t src_stride) {
  sim_context* c = sim_current();
  sim_core_state* s = c->state;
  const sim_target* t = dma_of(c);
  const uint64_t bytes = (uint64_t)row_bytes * rows;
  sim_event e;
  if (channel < 0 || channel >= t->dma_channels)
    sim_fail("stowage_dma_start on core %d of target %d: channel %d does not exist ('%s' has %d DMA channel(s))",
             c->core, c->target, channel, t->name, t->dma_channels);
  if (bytes > 0u && (dst == NULL || src == NULL))
    sim_fail("stowage_dma_start on core %d of target %d: NULL %s for %lu bytes", c->core, c->target,
             dst == NULL ? "destination" : "source", (unsigned long)bytes);
  if (bytes > 0u) {
    sim_check_access("DMA source", src, row_bytes, rows, src_stride);
    sim_check_access("DMA destination", dst, row_bytes, rows, dst_stride);
    sim_copy_2d(dst, src, row_bytes, rows, dst_stride, src_stride);
  }
  memset(&e, 0, sizeof e);
  e.start = s->clock > s->channel_free[channel] ? s->clock : s->channel_free[channel];
  e.end = e.start + sim_transfer_cycles(t->dma_setup_cycles, t->dma_bytes_per_cycle, bytes);
  e.name = "dma";
  e.bytes = bytes;
  e.target = c->target;
  e.track_type = SIM_TRACK_DMA;
  e.core = c->core;
  e.lane = channel;
  e.kind = SIM_KIND_DMA;
  sim_event_push(&s->events, &e);
  s->channel_free[channel] = e.end;
  s->dma_bytes += bytes;
  s->dma_transfers += 1u;
  s->used = 1;
  if (s->ticket_count == s->ticket_capacity) {
    size_t cap = s->ticket_capacity ? s->ticket_capacity * 2u : 256u;
    uint64_t* grown = (uint64_t*)realloc(s->ticket_end, cap * sizeof *grown);
    if (grown == NULL) sim_fail("out of memory for DMA tickets");
    s->ticket_end = grown;
    s->ticket_capacity = cap;
  }
  if (s->ticket_count >= 0xFFFFFFFEu) sim_fail("more than 2^32 - 2 DMA transfers on one core");
  s->ticket_end[s->ticket_count++] = e.end;
  return (stowage_dma_ticket)s->ticket_count;
}

void stowage_dma_wait(stowage_dma_ticket ticket) {
  sim_context* c = sim_current();
  sim_core_state* s = c->state;
  if (ticket == 0u || ticket > s->ticket_count)
    sim_fail("stowage_dma_wait on core %d of target %d: ticket %lu was not issued by this core (it issued %lu)",
             c->core, c->target, (unsigned long)ticket, (unsigned long)s->ticket_count);
  sim_wait_until(c, s->ticket_end[ticket - 1u], "dma wait", &s->dma_stall_cycles);
}
