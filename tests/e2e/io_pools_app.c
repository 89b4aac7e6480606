/* io_pools_app.c: a host application using the API Stowage generates with --io-in-pools --weights bin, written
 * the way firmware would use it; built and run by WeightsAndIoTest.cpp. The model is the zoo's DS-CNN (input
 * 'input', output 'output') compiled for examples/boards/cortex-m7.toml:
 *
 *     stowage compile ds-cnn.onnx -o gen/ --board examples/boards/cortex-m7.toml --io-in-pools --weights bin
 *
 * Pools: dtcm (workspace, static: inside net.c), sram (workspace, user: this file owns it), itcm and flash
 * (constant pools delivered as the images net_weights_itcm.bin and net_weights_flash.bin: this file loads them,
 * as boot code would copy them from external storage, and passes their addresses in net_workspaces).
 * Inputs and outputs live in the pools: net_map_inputs / net_map_outputs say where; nothing is copied by net_run.
 *
 * usage: app IMAGE_DIR INPUT.bin OUTPUT.bin
 * Exit codes: 0 success; 1 bad usage or a file error; 2 an error-code check failed; 3 a call failed. C99. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "net.h"

/* The application's memory: the user workspace pool and one buffer per weights image, each aligned as net.h
 * asks. On a device these would sit in linker sections (NET_POOL_ITCM_PLACE gives the ITCM pool's). */
#if defined(__GNUC__) || defined(__clang__)
#define APP_ALIGNED(n) __attribute__((aligned(n)))
#else
#define APP_ALIGNED(n)
#endif
static uint8_t sram[NET_POOL_SRAM_SIZE] APP_ALIGNED(NET_POOL_SRAM_ALIGN);
static uint8_t itcm_image[NET_POOL_ITCM_SIZE] APP_ALIGNED(NET_POOL_ITCM_ALIGN);
static uint8_t flash_image[NET_POOL_FLASH_SIZE + 1u] APP_ALIGNED(NET_POOL_FLASH_ALIGN);

/* Reads exactly `bytes` bytes of `dir`/`name` (or of `name` when dir is NULL) into dst. */
static int load(const char* dir, const char* name, void* dst, size_t bytes) {
  char path[4096];
  FILE* f;
  size_t got;
  int extra;
  if (dir != NULL) {
    if (strlen(dir) + strlen(name) + 2u > sizeof path) return 0;
    strcpy(path, dir);
    strcat(path, "/");
    strcat(path, name);
  } else {
    if (strlen(name) + 1u > sizeof path) return 0;
    strcpy(path, name);
  }
  f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return 0;
  }
  got = fread(dst, 1u, bytes, f);
  extra = fgetc(f);
  fclose(f);
  if (got != bytes || extra != EOF) {
    fprintf(stderr, "%s must hold exactly %lu bytes\n", path, (unsigned long)bytes);
    return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  net_workspaces ws;
  net_workspaces bad;
  net_inputs in;
  net_outputs out;
  FILE* f;
  int rc;
  if (argc != 4) {
    fprintf(stderr, "usage: %s IMAGE_DIR INPUT.bin OUTPUT.bin\n", argv[0]);
    return 1;
  }
  /* Boot: load the weights images (file names from net.h). */
  if (!load(argv[1], NET_POOL_ITCM_IMAGE, itcm_image, NET_POOL_ITCM_SIZE)) return 1;
  if (!load(argv[1], NET_POOL_FLASH_IMAGE, flash_image, NET_POOL_FLASH_SIZE)) return 1;
  memset(&ws, 0, sizeof ws);
  ws.sram = sram;
  ws.itcm = itcm_image;
  ws.flash = flash_image;

  /* Each bad pointer gives its own error code, and nothing runs. */
  bad = ws;
  bad.itcm = NULL;
  if (net_run(&bad) != NET_ERR_POOL_ITCM_NULL) return 2;
  bad = ws;
  bad.flash = flash_image + 1;
  if (net_run(&bad) != NET_ERR_POOL_FLASH_MISALIGNED) return 2;
  if (net_run(NULL) != NET_ERR_NULL_ARGUMENT) return 2;
  if (net_map_inputs(&ws, NULL) != NET_ERR_NULL_ARGUMENT) return 2;

  /* Where the input goes: write it there (here straight from the file), run, read the output in place. */
  rc = net_map_inputs(&ws, &in);
  if (rc != NET_OK) return 3;
  if (!load(NULL, argv[2], in.input, NET_INPUT_INPUT_BYTES)) return 1;
  rc = net_run(&ws);
  if (rc != NET_OK) return 3;
  rc = net_map_outputs(&ws, &out);
  if (rc != NET_OK) return 3;
  f = fopen(argv[3], "wb");
  if (f == NULL) return 1;
  if (fwrite(out.output, 1u, NET_OUTPUT_OUTPUT_BYTES, f) != NET_OUTPUT_OUTPUT_BYTES) {
    fclose(f);
    return 1;
  }
  if (fclose(f) != 0) return 1;
  printf("scores: %g %g %g ...\n", (double)out.output[0], (double)out.output[1], (double)out.output[2]);
  return 0;
}
