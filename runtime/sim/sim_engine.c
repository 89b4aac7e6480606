/* Host simulator of the matrix engine (stowage_accel.h): mvin, mvout and the compute calls take effect at issue
 * (the portable kernels compute the tile, so results equal the CPU path) and are timed on three in-order queues
 * (load, execute, store). An operation starts at max(issue time, its queue free, the end of every earlier
 * operation of another queue whose address ranges conflict with its own: read-after-write, write-after-read,
 * write-after-write). stowage_accel_fence moves the caller's clock to the last completion. Host code. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_accel.h"
#include "stowage_sim.h"

#define SIM_MAX_RANGES 12

typedef struct {
  uintptr_t lo, hi;
  int writes;
} sim_range;

/* An operation that may still constrain later ones. */
typedef struct {
  uint64_t end;
  int queue;
  int range_count;
  sim_range ranges[SIM_MAX_RANGES];
} sim_engine_op;

static struct {
  uint64_t queue_free[SIM_QUEUES];
  sim_engine_op* pending;
  size_t pending_count, pending_capacity;
  sim_event_list events;
  uint64_t busy[SIM_QUEUES], operations[SIM_QUEUES], bytes[SIM_QUEUES];
} engine;

static pthread_mutex_t engine_mutex = PTHREAD_MUTEX_INITIALIZER;

sim_event_list* sim_engine_events(void) { return &engine.events; }

uint64_t sim_engine_busy_until(void) {
  uint64_t latest = 0;
  int q;
  for (q = 0; q < SIM_QUEUES; ++q)
    if (engine.queue_free[q] > latest) latest = engine.queue_free[q];
  return latest;
}

void sim_engine_reset(void) {
  pthread_mutex_lock(&engine_mutex);
  sim_event_list_free(&engine.events);
  free(engine.pending);
  memset(&engine, 0, sizeof engine);
  pthread_mutex_unlock(&engine_mutex);
}

uint64_t stowage_sim_engine_busy_cycles(int queue) {
  return queue >= 0 && queue < SIM_QUEUES ? engine.busy[queue] : 0u;
}

uint64_t stowage_sim_engine_operations(int queue) {
  return queue >= 0 && queue < SIM_QUEUES ? engine.operations[queue] : 0u;
}

uint64_t stowage_sim_engine_bytes(int queue) { return queue >= 0 && queue < SIM_QUEUES ? engine.bytes[queue] : 0u; }

/* The first described target with a matrix engine. */
static int engine_target(const char* function) {
  int t;
  for (t = 0; t < STOWAGE_SIM_MAX_TARGETS; ++t)
    if (sim_targets[t].described && sim_targets[t].engine_dim > 0) return t;
  sim_fail("%s: no target with a matrix engine was described (the generated setup function calls "
           "stowage_sim_target with engine_dim > 0)",
           function);
  return -1;
}

static int conflicts(const sim_engine_op* a, const sim_range* ranges, int count) {
  int i, j;
  for (i = 0; i < a->range_count; ++i)
    for (j = 0; j < count; ++j)
      if ((a->ranges[i].writes || ranges[j].writes) && a->ranges[i].lo < ranges[j].hi && ranges[j].lo < a->ranges[i].hi)
        return 1;
  return 0;
}

/* Times one operation of `cycles` cycles on `queue` for the calling thread. */
static void schedule(int queue, const char* name, uint64_t cycles, uint64_t bytes, const sim_range* ranges, int count) {
  sim_context* c = sim_current();
  const int target = engine_target(name);
  const uint64_t issue = c->state->clock;
  uint64_t start, floor;
  size_t i, kept;
  sim_event e;
  sim_engine_op* op;
  pthread_mutex_lock(&engine_mutex);
  start = issue > engine.queue_free[queue] ? issue : engine.queue_free[queue];
  for (i = 0; i < engine.pending_count; ++i)
    if (engine.pending[i].queue != queue && engine.pending[i].end > start && conflicts(&engine.pending[i], ranges, count))
      start = engine.pending[i].end;
  memset(&e, 0, sizeof e);
  e.start = start;
  e.end = start + cycles;
  e.name = name;
  e.bytes = bytes;
  e.target = target;
  e.track_type = SIM_TRACK_ENGINE;
  e.core = -1;
  e.lane = queue;
  e.kind = queue == SIM_QUEUE_EXEC ? SIM_KIND_COMPUTE : SIM_KIND_DMA;
  sim_event_push(&engine.events, &e);
  engine.queue_free[queue] = e.end;
  engine.busy[queue] += cycles;
  engine.operations[queue] += 1u;
  engine.bytes[queue] += bytes;
  /* An operation ending before every queue is free (and before the issue time) constrains nothing later. */
  floor = engine.queue_free[0];
  for (i = 1; i < SIM_QUEUES; ++i)
    if (engine.queue_free[i] < floor) floor = engine.queue_free[i];
  if (issue > floor) floor = issue;
  for (i = 0, kept = 0; i < engine.pending_count; ++i)
    if (engine.pending[i].end > floor) engine.pending[kept++] = engine.pending[i];
  engine.pending_count = kept;
  if (engine.pending_count == engine.pending_capacity) {
    size_t cap = engine.pending_capacity ? engine.pending_capacity * 2u : 64u;
    sim_engine_op* grown = (sim_engine_op*)realloc(engine.pending, cap * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&engine_mutex);
      sim_fail("out of memory for engine operations");
    }
    engine.pending = grown;
    engine.pending_capacity = cap;
  }
  op = &engine.pending[engine.pending_count++];
  op->end = e.end;
  op->queue = queue;
  op->range_count = count;
  memcpy(op->ranges, ranges, (size_t)count * sizeof *ranges);
  pthread_mutex_unlock(&engine_mutex);
}

static sim_range range_of(const void* p, size_t bytes, int writes) {
  sim_range r;
  r.lo = (uintptr_t)p;
  r.hi = (uintptr_t)p + bytes;
  r.writes = writes;
  return r;
}

static const sim_target* engine_dma(const char* function) {
  const sim_target* t = &sim_targets[engine_target(function)];
  if (!t->dma_described)
    sim_fail("%s: the DMA of engine target '%s' was not described (the generated setup function calls stowage_sim_dma)",
             function, t->name);
  return t;
}

void stowage_accel_mvin(const void* dram, void* local, uint32_t rows, uint32_t row_bytes, uint32_t dram_stride) {
  const sim_target* t = engine_dma("stowage_accel_mvin");
  const uint64_t bytes = (uint64_t)rows * row_bytes;
  sim_range r[2];
  if (bytes > 0u) {
    if (dram == NULL || local == NULL) sim_fail("stowage_accel_mvin: NULL %s", dram == NULL ? "source" : "destination");
    sim_check_access("mvin source", dram, row_bytes, rows, dram_stride);
    sim_check_access("mvin destination", local, row_bytes, rows, row_bytes);
    sim_copy_2d(local, dram, row_bytes, rows, row_bytes, dram_stride);
  }
  r[0] = range_of(dram, rows ? (size_t)(rows - 1u) * dram_stride + row_bytes : 0u, 0);
  r[1] = range_of(local, (size_t)bytes, 1);
  schedule(SIM_QUEUE_LOAD, "mvin", sim_transfer_cycles(t->dma_setup_cycles, t->dma_bytes_per_cycle, bytes), bytes, r, 2);
}

void stowage_accel_mvout(void* dram, const void* local, uint32_t rows, uint32_t row_bytes, uint32_t dram_stride) {
  const sim_target* t = engine_dma("stowage_accel_mvout");
  const uint64_t bytes = (uint64_t)rows * row_bytes;
  sim_range r[2];
  if (bytes > 0u) {
    if (dram == NULL || local == NULL) sim_fail("stowage_accel_mvout: NULL %s", local == NULL ? "source" : "destination");
    sim_check_access("mvout source", local, row_bytes, rows, row_bytes);
    sim_check_access("mvout destination", dram, row_bytes, rows, dram_stride);
    sim_copy_2d(dram, local, row_bytes, rows, dram_stride, row_bytes);
  }
  r[0] = range_of(local, (size_t)bytes, 0);
  r[1] = range_of(dram, rows ? (size_t)(rows - 1u) * dram_stride + row_bytes : 0u, 1);
  schedule(SIM_QUEUE_STORE, "mvout", sim_transfer_cycles(t->dma_setup_cycles, t->dma_bytes_per_cycle, bytes), bytes, r, 2);
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1u) / b; }

uint64_t stowage_sim_engine_cycles(int dim, uint64_t m, uint64_t n, uint64_t k) {
  if (dim <= 0 || m == 0u || n == 0u || k == 0u) return 0u;
  return ceil_div(n, (uint64_t)dim) * ceil_div(k, (uint64_t)dim) * (m + (uint64_t)dim);
}

static int dim_of(const char* function) { return sim_targets[engine_target(function)].engine_dim; }

/* Adds an operand of `bytes` bytes (skipped when NULL) to `r`, bounds-checked when it is in a pool. */
static int operand(sim_range* r, int count, const char* what, const void* p, uint64_t bytes, int writes) {
  if (p == NULL || bytes == 0u) return count;
  sim_check_access(what, p, (size_t)bytes, 1u, (size_t)bytes);
  r[count] = range_of(p, (size_t)bytes, writes);
  return count + 1;
}

static void qconv_common(const char* name, int depthwise, const int8_t* x, const int8_t* w, const int32_t* bias,
                         const int32_t* multiplier, const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  const uint64_t pixels = (uint64_t)p->n * (uint64_t)p->oh * (uint64_t)p->ow;
  const uint64_t m = (uint64_t)p->m, quant = p->per_channel ? m * 4u : 4u;
  const int dim = dim_of(name);
  uint64_t cycles, wbytes;
  sim_range r[SIM_MAX_RANGES];
  int count = 0;
  if (depthwise) {
    wbytes = (uint64_t)p->kh * (uint64_t)p->kw * m;
    cycles = stowage_sim_engine_cycles(dim, pixels, m, (uint64_t)p->kh * (uint64_t)p->kw);
  } else {
    const uint64_t groups = p->kc > 0 && p->c % p->kc == 0 ? (uint64_t)(p->c / p->kc) : 1u;
    wbytes = m * (uint64_t)p->kh * (uint64_t)p->kw * (uint64_t)p->kc;
    cycles = groups * stowage_sim_engine_cycles(dim, pixels, m / groups, (uint64_t)p->kh * (uint64_t)p->kw * (uint64_t)p->kc);
  }
  count = operand(r, count, "engine input", x, (uint64_t)p->n * (uint64_t)p->h * (uint64_t)p->w * (uint64_t)p->c, 0);
  count = operand(r, count, "engine weights", w, wbytes, 0);
  count = operand(r, count, "engine bias", bias, m * 4u, 0);
  count = operand(r, count, "engine multipliers", multiplier, quant, 0);
  count = operand(r, count, "engine shifts", shift, quant, 0);
  count = operand(r, count, "engine output", y, pixels * m, 1);
  /* A QDQ layer (ONNX Runtime's float32 requantization) on the kernels' _rqf32 entry points. */
  if (depthwise && p->requant_f32) stowage_qdepthwise_conv2d_s8_rqf32(x, w, bias, multiplier, shift, y, p);
  else if (depthwise) stowage_qdepthwise_conv2d_s8(x, w, bias, multiplier, shift, y, p);
  else if (p->requant_f32) stowage_qconv2d_s8_rqf32(x, w, bias, multiplier, shift, y, p);
  else stowage_qconv2d_s8(x, w, bias, multiplier, shift, y, p);
  schedule(SIM_QUEUE_EXEC, name, cycles, 0u, r, count);
}

void stowage_accel_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                              const int32_t* shift, int8_t* y, const stowage_qconv_params* p) {
  qconv_common("qconv2d_s8", 0, x, w, bias, multiplier, shift, y, p);
}

void stowage_accel_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                        const int32_t* multiplier, const int32_t* shift, int8_t* y,
                                        const stowage_qconv_params* p) {
  qconv_common("qdepthwise_conv2d_s8", 1, x, w, bias, multiplier, shift, y, p);
}

void stowage_accel_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                       const int32_t* multiplier, const int32_t* shift, int8_t* y,
                                       const stowage_qfc_params* p) {
  const uint64_t b = (uint64_t)p->batches, k = (uint64_t)p->k, m = (uint64_t)p->m;
  const uint64_t quant = p->per_channel ? m * 4u : 4u;
  sim_range r[SIM_MAX_RANGES];
  int count = 0;
  const uint64_t cycles = stowage_sim_engine_cycles(dim_of("qfully_connected_s8"), b, m, k);
  count = operand(r, count, "engine input", x, b * k, 0);
  count = operand(r, count, "engine weights", w, m * k, 0);
  count = operand(r, count, "engine bias", bias, m * 4u, 0);
  count = operand(r, count, "engine multipliers", multiplier, quant, 0);
  count = operand(r, count, "engine shifts", shift, quant, 0);
  count = operand(r, count, "engine output", y, b * m, 1);
  if (p->requant_f32) stowage_qfully_connected_s8_rqf32(x, w, bias, multiplier, shift, y, p);
  else stowage_qfully_connected_s8(x, w, bias, multiplier, shift, y, p);
  schedule(SIM_QUEUE_EXEC, "qfully_connected_s8", cycles, 0u, r, count);
}

void stowage_accel_conv2d_f32(const float* x, const float* w, const float* bias, float* y,
                              const stowage_conv2d_params* p) {
  const uint64_t groups = p->group > 0 ? (uint64_t)p->group : 1u;
  const uint64_t m = (uint64_t)p->m, cpg = (uint64_t)p->c / groups;
  const uint64_t pixels = (uint64_t)p->n * (uint64_t)p->oh * (uint64_t)p->ow;
  const uint64_t k = cpg * (uint64_t)p->kh * (uint64_t)p->kw;
  sim_range r[SIM_MAX_RANGES];
  int count = 0;
  const uint64_t cycles = groups * stowage_sim_engine_cycles(dim_of("conv2d_f32"), pixels, m / groups, k);
  count = operand(r, count, "engine input", x, (uint64_t)p->n * (uint64_t)p->c * (uint64_t)p->h * (uint64_t)p->w * 4u, 0);
  count = operand(r, count, "engine weights", w, m * k * 4u, 0);
  count = operand(r, count, "engine bias", bias, m * 4u, 0);
  count = operand(r, count, "engine output", y, pixels * m * 4u, 1);
  stowage_conv2d_f32(x, w, bias, y, p);
  schedule(SIM_QUEUE_EXEC, "conv2d_f32", cycles, 0u, r, count);
}

void stowage_accel_gemm_f32(const float* a, const float* b, const float* c, float* y, const stowage_gemm_params* p) {
  const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
  sim_range r[SIM_MAX_RANGES];
  int count = 0;
  const uint64_t cycles = stowage_sim_engine_cycles(dim_of("gemm_f32"), m, n, k);
  count = operand(r, count, "engine input", a, m * k * 4u, 0);
  count = operand(r, count, "engine weights", b, k * n * 4u, 0);
  if (c != NULL && p->beta != 0.0f)
    count = operand(r, count, "engine addend", c, (uint64_t)p->c_rows * (uint64_t)p->c_cols * 4u, 0);
  count = operand(r, count, "engine output", y, m * n * 4u, 1);
  stowage_gemm_f32(a, b, c, y, p);
  schedule(SIM_QUEUE_EXEC, "gemm_f32", cycles, 0u, r, count);
}

/* A batched product's batch count, and the elements of A and B its batches reach: each starts at one matrix
 * (a_extent = m * k, b_extent = k * n on entry) and grows by the stride of every batch dim past the first. */
static void batched_extents(int32_t rank, const int32_t* shape, const int64_t* a_stride, const int64_t* b_stride,
                            uint64_t* batches, uint64_t* a_extent, uint64_t* b_extent) {
  int32_t d;
  for (d = 0; d < rank; ++d) {
    *batches *= (uint64_t)shape[d];
    *a_extent += (uint64_t)(shape[d] - 1) * (uint64_t)a_stride[d];
    *b_extent += (uint64_t)(shape[d] - 1) * (uint64_t)b_stride[d];
  }
}

void stowage_accel_matmul_f32(const float* a, const float* b, float* y, const stowage_matmul_params* p) {
  const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
  uint64_t batches = 1u, a_extent = m * k, b_extent = k * n;
  sim_range r[SIM_MAX_RANGES];
  int count = 0;
  batched_extents(p->batch_rank, p->batch_shape, p->a_stride, p->b_stride, &batches, &a_extent, &b_extent);
  count = operand(r, count, "engine input", a, a_extent * 4u, 0);
  count = operand(r, count, "engine weights", b, b_extent * 4u, 0);
  count = operand(r, count, "engine output", y, batches * m * n * 4u, 1);
  stowage_matmul_f32(a, b, y, p);
  schedule(SIM_QUEUE_EXEC, "matmul_f32", batches * stowage_sim_engine_cycles(dim_of("matmul_f32"), m, n, k), 0u, r, count);
}

/* Bytes of an integer operand of type `type` (STOWAGE_ELEM_*). */
static uint64_t elem_bytes(int32_t type) { return type == STOWAGE_ELEM_S32 ? 4u : 1u; }

static void qlinear_conv_common(const char* name, const void* x, const void* w, const float* x_scale,
                                const void* x_zero_point, const float* w_scale, const void* w_zero_point,
                                const float* y_scale, const void* y_zero_point, const int32_t* bias, void* y,
                                const stowage_qlinear_conv_params* p) {
  const uint64_t groups = p->group > 0 ? (uint64_t)p->group : 1u;
  const uint64_t m = (uint64_t)p->m, cpg = (uint64_t)p->c / groups, wq = (uint64_t)p->w_quant_count;
  const uint64_t pixels = (uint64_t)p->n * (uint64_t)p->oh * (uint64_t)p->ow;
  const uint64_t k = cpg * (uint64_t)p->kh * (uint64_t)p->kw;
  sim_range r[SIM_MAX_RANGES];
  int count = 0;
  const uint64_t cycles = groups * stowage_sim_engine_cycles(dim_of(name), pixels, m / groups, k);
  count = operand(r, count, "engine input", x,
                  (uint64_t)p->n * (uint64_t)p->c * (uint64_t)p->h * (uint64_t)p->w * elem_bytes(p->x_type), 0);
  count = operand(r, count, "engine weights", w, m * k * elem_bytes(p->w_type), 0);
  count = operand(r, count, "engine input scale", x_scale, 4u, 0);
  count = operand(r, count, "engine input zero point", x_zero_point, 1u, 0);
  count = operand(r, count, "engine weight scales", w_scale, wq * 4u, 0);
  count = operand(r, count, "engine weight zero points", w_zero_point, wq, 0);
  count = operand(r, count, "engine output scale", y_scale, 4u, 0);
  count = operand(r, count, "engine output zero point", y_zero_point, 1u, 0);
  count = operand(r, count, "engine bias", bias, m * 4u, 0);
  count = operand(r, count, "engine output", y, pixels * m * elem_bytes(p->y_type), 1);
  if (y_scale == NULL) stowage_conv_integer(x, w, x_zero_point, w_zero_point, (int32_t*)y, p);
  else stowage_qlinear_conv(x, w, x_scale, x_zero_point, w_scale, w_zero_point, y_scale, y_zero_point, bias, y, p);
  schedule(SIM_QUEUE_EXEC, name, cycles, 0u, r, count);
}

void stowage_accel_qlinear_conv(const void* x, const void* w, const float* x_scale, const void* x_zero_point,
                                const float* w_scale, const void* w_zero_point, const float* y_scale,
                                const void* y_zero_point, const int32_t* bias, void* y,
                                const stowage_qlinear_conv_params* p) {
  if (x_scale == NULL || w_scale == NULL || y_scale == NULL) sim_fail("stowage_accel_qlinear_conv: NULL scale");
  qlinear_conv_common("qlinear_conv", x, w, x_scale, x_zero_point, w_scale, w_zero_point, y_scale, y_zero_point, bias, y, p);
}

void stowage_accel_conv_integer(const void* x, const void* w, const void* x_zero_point, const void* w_zero_point,
                                int32_t* y, const stowage_qlinear_conv_params* p) {
  qlinear_conv_common("conv_integer", x, w, NULL, x_zero_point, NULL, w_zero_point, NULL, NULL, NULL, y, p);
}

static void qlinear_matmul_common(const char* name, const void* a, const void* b, const float* a_scale,
                                  const void* a_zero_point, const float* b_scale, const void* b_zero_point,
                                  const float* y_scale, const void* y_zero_point, void* y,
                                  const stowage_qlinear_matmul_params* p) {
  const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
  const uint64_t aq = (uint64_t)p->a_quant_count, bq = (uint64_t)p->b_quant_count, yq = (uint64_t)p->y_quant_count;
  uint64_t batches = 1u, a_extent = m * k, b_extent = k * n;
  sim_range r[SIM_MAX_RANGES];
  int count = 0;
  batched_extents(p->batch_rank, p->batch_shape, p->a_stride, p->b_stride, &batches, &a_extent, &b_extent);
  count = operand(r, count, "engine input", a, a_extent * elem_bytes(p->a_type), 0);
  count = operand(r, count, "engine weights", b, b_extent * elem_bytes(p->b_type), 0);
  count = operand(r, count, "engine input scales", a_scale, aq * 4u, 0);
  count = operand(r, count, "engine input zero points", a_zero_point, aq, 0);
  count = operand(r, count, "engine weight scales", b_scale, bq * 4u, 0);
  count = operand(r, count, "engine weight zero points", b_zero_point, bq, 0);
  count = operand(r, count, "engine output scales", y_scale, yq * 4u, 0);
  count = operand(r, count, "engine output zero points", y_zero_point, yq, 0);
  count = operand(r, count, "engine output", y, batches * m * n * elem_bytes(p->y_type), 1);
  if (y_scale == NULL) stowage_matmul_integer(a, b, a_zero_point, b_zero_point, (int32_t*)y, p);
  else stowage_qlinear_matmul(a, b, a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point, y, p);
  schedule(SIM_QUEUE_EXEC, name, batches * stowage_sim_engine_cycles(dim_of(name), m, n, k), 0u, r, count);
}

void stowage_accel_qlinear_matmul(const void* a, const void* b, const float* a_scale, const void* a_zero_point,
                                  const float* b_scale, const void* b_zero_point, const float* y_scale,
                                  const void* y_zero_point, void* y, const stowage_qlinear_matmul_params* p) {
  if (a_scale == NULL || b_scale == NULL || y_scale == NULL) sim_fail("stowage_accel_qlinear_matmul: NULL scale");
  qlinear_matmul_common("qlinear_matmul", a, b, a_scale, a_zero_point, b_scale, b_zero_point, y_scale, y_zero_point, y, p);
}

void stowage_accel_matmul_integer(const void* a, const void* b, const void* a_zero_point, const void* b_zero_point,
                                  int32_t* y, const stowage_qlinear_matmul_params* p) {
  qlinear_matmul_common("matmul_integer", a, b, NULL, a_zero_point, NULL, b_zero_point, NULL, NULL, y, p);
}

void stowage_accel_fence(void) {
  sim_context* c = sim_current();
  uint64_t latest;
  pthread_mutex_lock(&engine_mutex);
  latest = sim_engine_busy_until();
  engine.pending_count = 0;
  pthread_mutex_unlock(&engine_mutex);
  sim_wait_until(c, latest, "fence", &c->state->fence_wait_cycles);
}
