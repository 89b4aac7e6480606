/* fw_profile.c: the per-layer profile of -DSTOWAGE_PROFILE_LAYERS. Generated code calls stowage_profile_layer after
 * each CPU layer; each call records the instructions since the previous one (stowage_fw_counter_stop reads the
 * counter without stopping it) less what a reading costs, and stowage_fw_profile_print writes one line per layer
 * after the run: "layer NAME: N instructions M macs". C99. */
#if defined(STOWAGE_PROFILE_LAYERS)

#include "stowage_fw.h"
#include "stowage_hal.h"

#ifndef STOWAGE_FW_PROFILE_MAX
#define STOWAGE_FW_PROFILE_MAX 512
#endif

static const char* layer_names[STOWAGE_FW_PROFILE_MAX];
static unsigned long long layer_instructions[STOWAGE_FW_PROFILE_MAX];
static unsigned long layer_macs[STOWAGE_FW_PROFILE_MAX];
static unsigned layer_count, layers_dropped;
static unsigned long long last_reading, reading_cost;

void stowage_fw_profile_start(void) {
    /* What one reading of the counter costs (it divides in software on Cortex-M): taken off every layer. */
    const unsigned long long a = stowage_fw_counter_stop();
    const unsigned long long b = stowage_fw_counter_stop();
    reading_cost = b - a;
    layer_count = 0;
    layers_dropped = 0;
    last_reading = stowage_fw_counter_stop();
}

void stowage_profile_layer(const char* layer, unsigned long macs) {
    const unsigned long long now = stowage_fw_counter_stop();
    if (layer_count < STOWAGE_FW_PROFILE_MAX) {
        layer_names[layer_count] = layer;
        layer_instructions[layer_count] = now - last_reading > reading_cost ? now - last_reading - reading_cost : 0;
        layer_macs[layer_count] = macs;
        ++layer_count;
    } else {
        ++layers_dropped;
    }
    last_reading = now;
}

void stowage_fw_profile_print(void) {
    unsigned i;
    for (i = 0; i < layer_count; ++i) {
        stowage_fw_write("layer ");
        stowage_fw_write(layer_names[i]);
        stowage_fw_write(": ");
        stowage_fw_write_u64(layer_instructions[i]);
        stowage_fw_write(" instructions ");
        stowage_fw_write_u64((unsigned long long)layer_macs[i]);
        stowage_fw_write(" macs\n");
    }
    if (layers_dropped > 0) {
        stowage_fw_write("layers not recorded (raise STOWAGE_FW_PROFILE_MAX): ");
        stowage_fw_write_u64(layers_dropped);
        stowage_fw_write("\n");
    }
}

#else
typedef int stowage_fw_profile_unused; /* ISO C wants a declaration in every translation unit */
#endif
