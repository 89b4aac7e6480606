/* main.c: a small application around a model compiled by Stowage for the Cortex-M7 board
 * (examples/boards/cortex-m7.toml), written the way firmware would use it. C99, no malloc.
 *
 * The model here is the ResNet-8 of the zoo, compiled with
 *
 *     stowage compile resnet8.onnx -o out/ --board examples/boards/cortex-m7.toml --name net
 *
 * which generates out/net.h, out/net.c and out/net_weights.c. The board has four pools:
 *
 *   dtcm   workspace  static  Stowage emits the array itself (in net.c), in section .dtcm
 *   sram   workspace  user    THIS FILE provides the memory (below), in a section of our choice
 *   itcm   constant   static  weights, emitted in net_weights.c, in section .itcm
 *   flash  constant   static  weights, emitted in net_weights.c, in section .rodata.flash
 *
 * So the application only owns the `user` pool(s): one uint8_t* per user pool in net_workspaces. The
 * linker script must provide .dtcm, .itcm, .rodata.flash and the application's own .sram_pool (see
 * README.md next to this file for a GNU ld fragment).
 *
 * On a device, main() runs the model on a built-in input and prints the scores. On a host it can also be
 * driven with files (raw bytes in the machine's byte order, exactly NET_INPUT_INPUT_BYTES in and
 * NET_OUTPUT_OUTPUT_BYTES out):
 *
 *     ./app                      built-in deterministic input, prints the scores
 *     ./app input.bin output.bin reads the input from input.bin, writes the output to output.bin
 *
 * Exit codes: 0 success; 1 bad usage or a file error; 2 the error-code checks failed; 3 net_run failed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "net.h"

/* ---------------------------------------------------------------------------------------------------
 * The `user` pool: memory the application hands to net_run.
 *
 * NET_POOL_SRAM_SIZE is the number of bytes this model needs in the pool and NET_POOL_SRAM_ALIGN the
 * alignment its base address must have. Here the memory is a static array that the linker places in
 * .sram_pool (any name works: it is the application's section, not Stowage's). It could equally be a
 * region reserved in the linker script, a buffer shared with other code when the model is not running
 * (the pool holds no state between calls), or memory from an RTOS heap at start-up.
 * --------------------------------------------------------------------------------------------------- */
#if defined(__GNUC__) || defined(__clang__)
#define APP_SRAM_POOL_PLACE __attribute__((section(".sram_pool"), aligned(NET_POOL_SRAM_ALIGN)))
#else
#define APP_SRAM_POOL_PLACE /* other toolchains: use their pragma for sections and alignment */
#endif
static uint8_t app_sram_pool[NET_POOL_SRAM_SIZE] APP_SRAM_POOL_PLACE;

/* Input and output buffers. They may live anywhere (ordinary .bss here); outputs must not overlap the
 * inputs or the pools. */
static float app_input[NET_INPUT_INPUT_ELEMS];
static float app_output[NET_OUTPUT_OUTPUT_ELEMS];

/* A recognisable value to check that net_run writes nothing when it rejects its arguments. */
#define APP_SENTINEL (-12345.0f)

/* ---------------------------------------------------------------------------------------------------
 * Error codes: net_run checks its arguments before touching any memory and returns a code naming the
 * problem. This shows each one and checks that nothing was written. Returns 0 when every check passes.
 * --------------------------------------------------------------------------------------------------- */
static int expect_code(const char* what, int got, int want, const char* want_name) {
  size_t i;
  int untouched = 1;
  for (i = 0; i < NET_OUTPUT_OUTPUT_ELEMS; ++i)
    if (app_output[i] != APP_SENTINEL) untouched = 0;
  printf("  %-34s -> %2d (%s)%s\n", what, got, want_name, got == want && untouched ? "" : "  UNEXPECTED");
  if (got != want) {
    printf("    expected %d\n", want);
    return 1;
  }
  if (!untouched) {
    printf("    the output was written although net_run failed\n");
    return 1;
  }
  return 0;
}

static int demonstrate_error_codes(void) {
  net_inputs in;
  net_outputs out;
  net_workspaces ws;
  int failures = 0;
  size_t i;

  for (i = 0; i < NET_OUTPUT_OUTPUT_ELEMS; ++i) app_output[i] = APP_SENTINEL;
  in.input = app_input;
  out.output = app_output;

  printf("error codes:\n");

  /* A NULL argument, or a NULL input/output pointer. */
  ws.sram = app_sram_pool;
  failures += expect_code("net_run(NULL, &out, &ws)", net_run(NULL, &out, &ws), NET_ERR_NULL_ARGUMENT,
                          "NET_ERR_NULL_ARGUMENT");

  /* The user pool's pointer is NULL: e.g. the application forgot to fill in net_workspaces. */
  ws.sram = NULL;
  failures += expect_code("ws.sram = NULL", net_run(&in, &out, &ws), NET_ERR_POOL_SRAM_NULL, "NET_ERR_POOL_SRAM_NULL");

  /* The user pool's pointer is not aligned to NET_POOL_SRAM_ALIGN (one byte past an aligned address).
   * net_run rejects it before using the pool, so the pointer never reaches past the array. */
#if NET_POOL_SRAM_ALIGN > 1
  ws.sram = app_sram_pool + 1;
  failures += expect_code("ws.sram = pool + 1 (misaligned)", net_run(&in, &out, &ws), NET_ERR_POOL_SRAM_MISALIGNED,
                          "NET_ERR_POOL_SRAM_MISALIGNED");
#endif

  printf("error codes: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures;
}

/* A deterministic input for the device build (and for `./app` without arguments): a smooth pattern in
 * [-1, 1], standing in for a camera frame or a sensor window. */
static void fill_builtin_input(void) {
  size_t i;
  for (i = 0; i < NET_INPUT_INPUT_ELEMS; ++i) {
    unsigned v = (unsigned)((i * 37u + 11u) % 257u);
    app_input[i] = (float)v / 128.0f - 1.0f;
  }
}

/* Host only: reads exactly `bytes` bytes from `path` into `dst`. Returns 0 on success. */
static int read_exactly(const char* path, void* dst, size_t bytes) {
  FILE* f = fopen(path, "rb");
  size_t got;
  int extra;
  if (f == NULL) {
    fprintf(stderr, "app: cannot open %s\n", path);
    return 1;
  }
  got = fread(dst, 1, bytes, f);
  extra = fgetc(f);
  fclose(f);
  if (got != bytes || extra != EOF) {
    fprintf(stderr, "app: %s must hold exactly %lu bytes (the model's input)\n", path, (unsigned long)bytes);
    return 1;
  }
  return 0;
}

/* Host only: writes `bytes` bytes from `src` to `path`. Returns 0 on success. */
static int write_all(const char* path, const void* src, size_t bytes) {
  FILE* f = fopen(path, "wb");
  int bad;
  if (f == NULL) {
    fprintf(stderr, "app: cannot create %s\n", path);
    return 1;
  }
  bad = fwrite(src, 1, bytes, f) != bytes;
  bad |= fclose(f) != 0;
  if (bad) fprintf(stderr, "app: cannot write %s\n", path);
  return bad;
}

int main(int argc, char** argv) {
  net_inputs in;
  net_outputs out;
  net_workspaces ws;
  int rc;

  if (argc != 1 && argc != 3) {
    fprintf(stderr, "usage: %s [input.bin output.bin]\n", argv[0]);
    return 1;
  }

  /* 1. The error codes (cheap: net_run returns before running any layer). */
  if (demonstrate_error_codes() != 0) return 2;

  /* 2. The input: from a file on the host, else the built-in pattern. */
  if (argc == 3) {
    if (read_exactly(argv[1], app_input, NET_INPUT_INPUT_BYTES) != 0) return 1;
  } else {
    fill_builtin_input();
  }

  /* 3. One inference. Only the user pool is passed; dtcm, itcm and flash are reached by net.c itself. */
  in.input = app_input;
  out.output = app_output;
  ws.sram = app_sram_pool;
  rc = net_run(&in, &out, &ws);
  if (rc != NET_OK) {
    printf("net_run failed: %d\n", rc);
    return 3;
  }

  /* 4. The result: written raw to a file on the host, else printed with the best class. */
  if (argc == 3) return write_all(argv[2], app_output, NET_OUTPUT_OUTPUT_BYTES) != 0 ? 1 : 0;
  {
    size_t i, best = 0;
    printf("scores:");
    for (i = 0; i < NET_OUTPUT_OUTPUT_ELEMS; ++i) {
      printf(" %.6f", (double)app_output[i]);
      if (app_output[i] > app_output[best]) best = i;
    }
    printf("\nclass: %lu\n", (unsigned long)best);
  }
  return 0;
}
