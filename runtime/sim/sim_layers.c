/* Host simulator layer spans: generated code marks the start and end of each layer, offloaded or run by the CPU
 * (host thread, outside stowage_run_on_cores), so benchmarks and tests can read the simulated cycles of every layer
 * and the trace draws them on tracks of their own. Host code. */
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_sim.h"

typedef struct {
  const char* name; /* not copied: generated code passes literals */
  uint64_t start, end;
  int open;
  int on_cpu;
} sim_layer;

static sim_layer* layers;
static size_t layer_count, layer_capacity;

static void begin_layer(const char* function, const char* name, int on_cpu) {
  sim_context* c = sim_current();
  if (c->run != NULL) sim_fail("%s('%s') called inside stowage_run_on_cores", function, name);
  if (layer_count == layer_capacity) {
    const size_t capacity = layer_capacity > 0u ? 2u * layer_capacity : 64u;
    sim_layer* grown = (sim_layer*)realloc(layers, capacity * sizeof *grown);
    if (grown == NULL) sim_fail("out of memory for %lu layer spans", (unsigned long)capacity);
    layers = grown;
    layer_capacity = capacity;
  }
  layers[layer_count].name = name != NULL ? name : "layer";
  layers[layer_count].start = layers[layer_count].end = c->state->clock;
  layers[layer_count].open = 1;
  layers[layer_count].on_cpu = on_cpu;
  ++layer_count;
}

void stowage_sim_layer_begin(const char* name) { begin_layer("stowage_sim_layer_begin", name, 0); }

void stowage_sim_cpu_layer_begin(const char* name) { begin_layer("stowage_sim_cpu_layer_begin", name, 1); }

void stowage_sim_layer_end(const char* name) {
  sim_context* c = sim_current();
  sim_layer* l = layer_count > 0u ? &layers[layer_count - 1u] : NULL;
  if (c->run != NULL) sim_fail("stowage_sim_layer_end('%s') called inside stowage_run_on_cores", name);
  if (l == NULL || !l->open || (name != NULL && strcmp(name, l->name) != 0))
    sim_fail("stowage_sim_layer_end('%s') without a matching stowage_sim_layer_begin or stowage_sim_cpu_layer_begin", name != NULL ? name : "");
  l->end = c->state->clock;
  l->open = 0;
}

size_t stowage_sim_layer_count(void) { return layer_count; }

const char* stowage_sim_layer_name(size_t i) { return i < layer_count ? layers[i].name : NULL; }

uint64_t stowage_sim_layer_start(size_t i) { return i < layer_count ? layers[i].start : 0u; }

uint64_t stowage_sim_layer_cycles(size_t i) { return i < layer_count ? layers[i].end - layers[i].start : 0u; }

int stowage_sim_layer_on_cpu(size_t i) { return i < layer_count ? layers[i].on_cpu : 0; }

void sim_layers_reset(void) {
  free(layers);
  layers = NULL;
  layer_count = layer_capacity = 0u;
}
