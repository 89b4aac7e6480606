/* Host simulator trace: timed events per core, DMA channel and engine queue, collected in a fixed order, and the
 * layer spans on two tracks of target 0 (CPU layers, offloaded layers), written as a Chrome trace (trace.json:
 * "traceEvents" of complete events, "ph":"X", one process per target and one thread per track, named by metadata
 * events; 1 microsecond in the viewer is 1 simulated cycle). Host code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_sim.h"

void sim_event_push(sim_event_list* list, const sim_event* event) {
  if (list->count == list->capacity) {
    size_t cap = list->capacity ? list->capacity * 2u : 256u;
    sim_event* grown = (sim_event*)realloc(list->items, cap * sizeof *grown);
    if (grown == NULL) sim_fail("out of memory for %lu trace events", (unsigned long)cap);
    list->items = grown;
    list->capacity = cap;
  }
  list->items[list->count++] = *event;
}

void sim_event_list_free(sim_event_list* list) {
  free(list->items);
  list->items = NULL;
  list->count = list->capacity = 0;
}

static int compare_events(const void* pa, const void* pb) {
  const sim_event* a = (const sim_event*)pa;
  const sim_event* b = (const sim_event*)pb;
  if (a->target != b->target) return a->target < b->target ? -1 : 1;
  if (a->track_type != b->track_type) return a->track_type < b->track_type ? -1 : 1;
  if (a->core != b->core) return a->core < b->core ? -1 : 1;
  if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  if (a->end != b->end) return a->end < b->end ? -1 : 1;
  return strcmp(a->name, b->name);
}

sim_event* sim_collect_events(size_t* count) {
  size_t total = sim_engine_events()->count, at = 0;
  sim_event* all;
  int t, k;
  for (t = 0; t < STOWAGE_SIM_MAX_TARGETS; ++t)
    for (k = 0; k < STOWAGE_SIM_MAX_CORES; ++k)
      if (sim_targets[t].core[k] != NULL) total += sim_targets[t].core[k]->events.count;
  all = (sim_event*)malloc((total > 0u ? total : 1u) * sizeof *all);
  if (all == NULL) sim_fail("out of memory for %lu trace events", (unsigned long)total);
  for (t = 0; t < STOWAGE_SIM_MAX_TARGETS; ++t)
    for (k = 0; k < STOWAGE_SIM_MAX_CORES; ++k) {
      const sim_core_state* s = sim_targets[t].core[k];
      if (s == NULL || s->events.count == 0u) continue;
      memcpy(all + at, s->events.items, s->events.count * sizeof *all);
      at += s->events.count;
    }
  if (sim_engine_events()->count > 0u)
    memcpy(all + at, sim_engine_events()->items, sim_engine_events()->count * sizeof *all);
  qsort(all, total, sizeof *all, compare_events);
  *count = total;
  return all;
}

const char* stowage_sim_target_name(int target) {
  static const char* const fallback[] = {"host", "target"};
  if (target < 0 || target >= STOWAGE_SIM_MAX_TARGETS) return fallback[1];
  if (sim_targets[target].described) return sim_targets[target].name;
  return fallback[target == 0 ? 0 : 1];
}

static int track_id(int track_type, int core, int lane) {
  if (track_type == SIM_TRACK_ENGINE) return 10000 + lane;
  return core * (STOWAGE_SIM_MAX_CHANNELS + 1) + 1 + (track_type == SIM_TRACK_DMA ? 1 + lane : 0);
}

static void write_string(FILE* f, const char* s) {
  fputc('"', f);
  for (; *s; ++s) {
    const unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch < 0x20u) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static const char* const queue_names[SIM_QUEUES] = {"engine load (mvin)", "engine execute", "engine store (mvout)"};

/* The layer tracks of target 0's process: spans of the layers the CPU runs untiled, and of the offloaded ones. */
enum { SIM_TRACK_LAYERS = 3, TRACK_CPU_LAYERS = 20000, TRACK_OFFLOADED_LAYERS = 20001 };

static void write_thread_name(FILE* f, int* first, int target, int track_type, int core, int lane) {
  char name[96];
  const int tid = track_type == SIM_TRACK_LAYERS ? (lane ? TRACK_CPU_LAYERS : TRACK_OFFLOADED_LAYERS) : track_id(track_type, core, lane);
  if (track_type == SIM_TRACK_LAYERS) snprintf(name, sizeof name, "%s", lane ? "CPU layers" : "offloaded layers");
  else if (track_type == SIM_TRACK_ENGINE) snprintf(name, sizeof name, "%s", queue_names[lane]);
  else if (track_type == SIM_TRACK_DMA) snprintf(name, sizeof name, "core %d DMA channel %d", core, lane);
  else snprintf(name, sizeof name, "core %d", core);
  fprintf(f, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":", *first ? "" : ",",
          target + 1, tid);
  write_string(f, name);
  fprintf(f, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
          target + 1, tid, tid);
  *first = 0;
}

int stowage_sim_write_trace(const char* path) {
  FILE* f = fopen(path, "w");
  size_t count = 0, i, layers = stowage_sim_layer_count();
  sim_event* events;
  int first = 1, t, k, ok, cpu_layers = 0, offloaded_layers = 0;
  if (f == NULL) {
    fprintf(stderr, "stowage sim: cannot create the trace file %s\n", path);
    return 0;
  }
  events = sim_collect_events(&count);
  fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"time_unit\":\"1 trace microsecond = 1 simulated cycle\"},"
        "\n\"traceEvents\":[",
        f);
  /* Processes (targets) and the tracks of every core that ran, then tracks that only events mention. */
  for (t = 0; t < STOWAGE_SIM_MAX_TARGETS; ++t) {
    int used = 0;
    for (k = 0; k < STOWAGE_SIM_MAX_CORES; ++k)
      if (sim_targets[t].core[k] != NULL && sim_targets[t].core[k]->used) used = 1;
    for (i = 0; i < count && !used; ++i)
      if (events[i].target == t) used = 1;
    if (t == 0 && layers > 0u) used = 1;
    if (!used) continue;
    fprintf(f, "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", first ? "" : ",",
            t + 1);
    write_string(f, stowage_sim_target_name(t));
    fprintf(f, "}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"sort_index\":%d}}",
            t + 1, t);
    first = 0;
    for (k = 0; k < STOWAGE_SIM_MAX_CORES; ++k)
      if (sim_targets[t].core[k] != NULL && sim_targets[t].core[k]->used)
        write_thread_name(f, &first, t, SIM_TRACK_CORE, k, 0);
  }
  for (i = 0; i < count; ++i) {
    const sim_event* e = &events[i];
    const int fresh = i == 0 || e->target != events[i - 1].target || e->track_type != events[i - 1].track_type ||
                      e->core != events[i - 1].core || e->lane != events[i - 1].lane;
    if (fresh && e->track_type != SIM_TRACK_CORE) write_thread_name(f, &first, e->target, e->track_type, e->core, e->lane);
  }
  for (i = 0; i < layers; ++i) {
    if (stowage_sim_layer_on_cpu(i)) cpu_layers = 1;
    else offloaded_layers = 1;
  }
  if (cpu_layers) write_thread_name(f, &first, 0, SIM_TRACK_LAYERS, 0, 1);
  if (offloaded_layers) write_thread_name(f, &first, 0, SIM_TRACK_LAYERS, 0, 0);
  for (i = 0; i < count; ++i) {
    const sim_event* e = &events[i];
    static const char* const categories[] = {"compute", "dma", "wait"};
    fprintf(f, "%s\n{\"name\":", first ? "" : ",");
    write_string(f, e->name);
    fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu", categories[e->kind],
            e->target + 1, track_id(e->track_type, e->core, e->lane), (unsigned long long)e->start,
            (unsigned long long)(e->end - e->start));
    if (e->kind == SIM_KIND_DMA) fprintf(f, ",\"args\":{\"bytes\":%llu}", (unsigned long long)e->bytes);
    fputc('}', f);
    first = 0;
  }
  /* Layer spans, in the order they began (the host thread runs them one after another). */
  for (i = 0; i < layers; ++i) {
    fprintf(f, "%s\n{\"name\":", first ? "" : ",");
    write_string(f, stowage_sim_layer_name(i));
    fprintf(f, ",\"cat\":\"layer\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%llu,\"dur\":%llu}",
            stowage_sim_layer_on_cpu(i) ? TRACK_CPU_LAYERS : TRACK_OFFLOADED_LAYERS, (unsigned long long)stowage_sim_layer_start(i),
            (unsigned long long)stowage_sim_layer_cycles(i));
    first = 0;
  }
  fputs("\n]}\n", f);
  free(events);
  ok = !ferror(f);
  ok = fclose(f) == 0 && ok;
  if (!ok) fprintf(stderr, "stowage sim: writing the trace file %s failed\n", path);
  return ok;
}
