/* stowage_accel.h: the device interface generated code uses to run layers on accelerators and multi-core
 * targets: cores (fork/join, core id, barrier), DMA between pools, a matrix engine, and cost hooks for the
 * host simulator (runtime/sim). On a device the board's own functions stand behind these names (a board file
 * can rename each intrinsic and reorder its arguments, see docs/accelerators.md). C99. */
#ifndef STOWAGE_ACCEL_H
#define STOWAGE_ACCEL_H

#include <stddef.h>
#include <stdint.h>

#include "stowage_kernels.h"
#include "stowage_kernels_int8.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------ cores
 * A target with `cores = N` runs a function on its cores fork/join: stowage_run_on_cores returns when every
 * core has returned from fn. Inside fn, stowage_core_id() is 0..n-1 and stowage_num_cores() is n; outside
 * (the code calling net_run) they are 0 and 1. stowage_barrier() waits for every core of the current
 * stowage_run_on_cores call. `target` is the index the generated code gives the target (its position in the
 * board's [[targets]] list). */
typedef void (*stowage_core_fn)(void* arg);
void stowage_run_on_cores(int target, int cores, stowage_core_fn fn, void* arg);
int stowage_core_id(void);
int stowage_num_cores(void);
void stowage_barrier(void);

/* -------------------------------------------------------------------------------------------------- DMA
 * Core-driven DMA (the DORY/PULP and DSP style): a 2-D copy of `rows` rows of `row_bytes` bytes, rows
 * `src_stride` bytes apart in the source and `dst_stride` apart in the destination (a 1-D copy is rows = 1).
 * Issued on the calling core's channel `channel` (0 .. board dma channels - 1) and asynchronous: the bytes
 * may be read or written only after stowage_dma_wait on the returned ticket. Tickets of one core complete in
 * issue order per channel. */
typedef uint32_t stowage_dma_ticket;
stowage_dma_ticket stowage_dma_start(int channel, void* dst, const void* src, size_t row_bytes, size_t rows,
                                     size_t dst_stride, size_t src_stride);
void stowage_dma_wait(stowage_dma_ticket ticket);

/* ------------------------------------------------------------------------------------------ matrix engine
 * A Gemmini-style engine with three in-order queues that run concurrently: loads (mvin), execution (the
 * compute calls) and stores (mvout). Like Gemmini's reorder buffer, the engine itself orders two operations
 * of different queues that touch overlapping local addresses (read-after-write, write-after-read,
 * write-after-write), so a load into one half of a ping-pong buffer overlaps the computation on the other
 * half with no explicit wait. stowage_accel_fence() returns when every queued operation is complete; the CPU
 * may touch the destinations of mvout only after it.
 * mvin/mvout: `rows` rows of `row_bytes` bytes; the main-memory side rows are `dram_stride` bytes apart, the
 * local side is packed (row i at local + i * row_bytes). Compute calls: the kernels of stowage_kernels*.h on
 * tiles in local memory with the same arguments (params describe the tile), computed by the engine. */
void stowage_accel_mvin(const void* dram, void* local, uint32_t rows, uint32_t row_bytes, uint32_t dram_stride);
void stowage_accel_mvout(void* dram, const void* local, uint32_t rows, uint32_t row_bytes, uint32_t dram_stride);
void stowage_accel_qconv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* multiplier,
                              const int32_t* shift, int8_t* y, const stowage_qconv_params* p);
void stowage_accel_qdepthwise_conv2d_s8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                        const int32_t* multiplier, const int32_t* shift, int8_t* y,
                                        const stowage_qconv_params* p);
void stowage_accel_qfully_connected_s8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                       const int32_t* multiplier, const int32_t* shift, int8_t* y,
                                       const stowage_qfc_params* p);
void stowage_accel_conv2d_f32(const float* x, const float* w, const float* bias, float* y,
                              const stowage_conv2d_params* p);
void stowage_accel_gemm_f32(const float* a, const float* b, const float* c, float* y, const stowage_gemm_params* p);
void stowage_accel_matmul_f32(const float* a, const float* b, float* y, const stowage_matmul_params* p);
/* The ONNX integer kernels (stowage_kernels_qlinear.h): operands int8 or uint8 as p says; scales and zero points
 * are read where they are (main memory), like bias and multipliers. */
void stowage_accel_qlinear_conv(const void* x, const void* w, const float* x_scale, const void* x_zero_point,
                                const float* w_scale, const void* w_zero_point, const float* y_scale,
                                const void* y_zero_point, const int32_t* bias, void* y,
                                const stowage_qlinear_conv_params* p);
void stowage_accel_conv_integer(const void* x, const void* w, const void* x_zero_point, const void* w_zero_point,
                                int32_t* y, const stowage_qlinear_conv_params* p);
void stowage_accel_qlinear_matmul(const void* a, const void* b, const float* a_scale, const void* a_zero_point,
                                  const float* b_scale, const void* b_zero_point, const float* y_scale,
                                  const void* y_zero_point, void* y, const stowage_qlinear_matmul_params* p);
void stowage_accel_matmul_integer(const void* a, const void* b, const void* a_zero_point, const void* b_zero_point,
                                  int32_t* y, const stowage_qlinear_matmul_params* p);
void stowage_accel_fence(void);

/* ------------------------------------------------------------------------------------ host simulator hooks
 * Under STOWAGE_HOST_SIM, generated code describes the board to the simulator once (net_run calls its
 * setup function first) and charges each kernel it runs on a core with the cycles the compiler's cost model
 * gives it; on a device these macros expand to nothing. */
#if defined(STOWAGE_HOST_SIM)
/* Target `target` (index as above): name, cores, and the engine's dim (0 = no matrix engine; the engine does
 * dim x dim MACs per cycle). */
void stowage_sim_target(int target, const char* name, int cores, int engine_dim);
/* The DMA engine of `target`: channels per core, bytes per cycle per channel, cycles of setup per transfer. */
void stowage_sim_dma(int target, int channels, double bytes_per_cycle, double setup_cycles);
/* A fixed-address pool, bounds-checked: [base, base + bytes); with `per_core_stride` != 0 each core c of the
 * target has its own copy at base + c * per_core_stride. */
void stowage_sim_pool(const char* name, uintptr_t base, size_t bytes, size_t per_core_stride, int cores);
/* The calling core spends `cycles` computing (a kernel the compiler costed); `what` names it in the trace. */
void stowage_sim_compute(const char* what, uint64_t cycles);
/* Marks the start and end of layer `name` (the simulator prints each layer's cycles): an offloaded (tiled) layer
 * begins with stowage_sim_layer_begin, a layer the CPU runs untiled with stowage_sim_cpu_layer_begin. */
void stowage_sim_layer_begin(const char* name);
void stowage_sim_cpu_layer_begin(const char* name);
void stowage_sim_layer_end(const char* name);
#define STOWAGE_SIM_COMPUTE(what, cycles) stowage_sim_compute((what), (uint64_t)(cycles))
#else
#define STOWAGE_SIM_COMPUTE(what, cycles) ((void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif /* STOWAGE_ACCEL_H */
