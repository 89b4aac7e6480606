/* Host simulator of multi-core targets: stowage_run_on_cores runs fn on one pthread per core (each core starts
 * at the caller's clock; the caller's clock after the join is the latest core's) and stowage_barrier lines the
 * cores' clocks up at the latest arrival. Timing depends only on the program, never on thread scheduling. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_accel.h"

struct sim_run {
  stowage_core_fn fn;
  void* arg;
  int cores;
  pthread_barrier_t barrier;
  uint64_t arrivals[STOWAGE_SIM_MAX_CORES];
  sim_context contexts[STOWAGE_SIM_MAX_CORES];
};

static void* core_main(void* p) {
  sim_context* c = (sim_context*)p;
  sim_set_current(c);
  c->run->fn(c->run->arg);
  return NULL;
}

void stowage_run_on_cores(int target, int cores, stowage_core_fn fn, void* arg) {
  sim_context* caller = sim_current();
  sim_target* t = sim_target_at(target, "stowage_run_on_cores");
  pthread_t threads[STOWAGE_SIM_MAX_CORES];
  sim_run* run;
  uint64_t start, end;
  int c, member = 0;
  if (caller->run != NULL)
    sim_fail("stowage_run_on_cores(target %d) called by core %d of target %d: runs on cores do not nest", target,
             caller->core, caller->target);
  if (!t->described)
    sim_fail("stowage_run_on_cores: target %d was not described (the generated setup function calls "
             "stowage_sim_target first)",
             target);
  if (cores < 1 || cores > t->cores)
    sim_fail("stowage_run_on_cores: %d cores asked of target %d ('%s'), which has %d", cores, target, t->name,
             t->cores);
  if (fn == NULL) sim_fail("stowage_run_on_cores: no function given for target %d ('%s')", target, t->name);
  run = (sim_run*)calloc(1u, sizeof *run);
  if (run == NULL) sim_fail("out of memory for a run on %d cores", cores);
  run->fn = fn;
  run->arg = arg;
  run->cores = cores;
  if (pthread_barrier_init(&run->barrier, NULL, (unsigned)cores) != 0)
    sim_fail("cannot create a barrier for %d cores", cores);
  start = caller->state->clock;
  for (c = 0; c < cores; ++c) {
    sim_context* k = &run->contexts[c];
    k->target = target;
    k->core = c;
    k->cores = cores;
    k->run = run;
    k->state = sim_core_at(target, c);
    if (k->state == caller->state) member = 1;
    k->state->clock = start;
    k->state->used = 1;
  }
  for (c = 0; c < cores; ++c)
    if (pthread_create(&threads[c], NULL, core_main, &run->contexts[c]) != 0)
      sim_fail("cannot start a thread for core %d of target %d ('%s')", c, target, t->name);
  end = start;
  for (c = 0; c < cores; ++c) {
    pthread_join(threads[c], NULL);
    if (run->contexts[c].state->clock > end) end = run->contexts[c].state->clock;
  }
  pthread_barrier_destroy(&run->barrier);
  free(run);
  if (member) caller->state->clock = end;
  else sim_wait_until(caller, end, "cores", &caller->state->barrier_wait_cycles);
}

void stowage_barrier(void) {
  sim_context* c = sim_current();
  sim_run* run = c->run;
  uint64_t latest = 0;
  int k;
  if (run == NULL) return; /* one core: nothing to wait for */
  run->arrivals[c->core] = c->state->clock;
  pthread_barrier_wait(&run->barrier);
  for (k = 0; k < run->cores; ++k)
    if (run->arrivals[k] > latest) latest = run->arrivals[k];
  pthread_barrier_wait(&run->barrier); /* nobody overwrites arrivals before everyone has read them */
  sim_wait_until(c, latest, "barrier", &c->state->barrier_wait_cycles);
}
