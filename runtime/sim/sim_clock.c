/* Host simulator clocks: the calling thread's context (target, core, its clock), the per-core states, the
 * core id functions of stowage_accel.h, cost charging (stowage_sim_compute) and stowage_sim_reset. Host code. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_state.h"
#include "stowage_accel.h"
#include "stowage_sim.h"

sim_target sim_targets[STOWAGE_SIM_MAX_TARGETS];

static pthread_mutex_t sim_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t context_key;
static pthread_once_t context_key_once = PTHREAD_ONCE_INIT;
/* The thread that calls net_run: core 0 of target 0. */
static sim_context host_context;

static void make_context_key(void) {
  if (pthread_key_create(&context_key, NULL) != 0) sim_fail("cannot create the thread-local core context");
}

void sim_fail(const char* format, ...) {
  va_list args;
  fputs("stowage sim: ", stderr);
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  fflush(stderr);
  abort();
}

void sim_lock(void) { pthread_mutex_lock(&sim_mutex); }
void sim_unlock(void) { pthread_mutex_unlock(&sim_mutex); }

sim_target* sim_target_at(int target, const char* function) {
  if (target < 0 || target >= STOWAGE_SIM_MAX_TARGETS)
    sim_fail("%s: target index %d is out of range (the simulator handles targets 0..%d)", function, target,
             STOWAGE_SIM_MAX_TARGETS - 1);
  return &sim_targets[target];
}

sim_core_state* sim_core_at(int target, int core) {
  sim_target* t = sim_target_at(target, "core state");
  sim_core_state* s;
  if (core < 0 || core >= STOWAGE_SIM_MAX_CORES)
    sim_fail("core %d of target %d is out of range (the simulator handles %d cores per target)", core, target,
             STOWAGE_SIM_MAX_CORES);
  sim_lock();
  s = t->core[core];
  if (s == NULL) {
    s = (sim_core_state*)calloc(1u, sizeof *s);
    if (s == NULL) {
      sim_unlock();
      sim_fail("out of memory for the state of core %d of target %d", core, target);
    }
    t->core[core] = s;
  }
  sim_unlock();
  return s;
}

sim_context* sim_current(void) {
  sim_context* c;
  pthread_once(&context_key_once, make_context_key);
  c = (sim_context*)pthread_getspecific(context_key);
  if (c != NULL) return c;
  if (host_context.state == NULL) {
    host_context.target = 0;
    host_context.core = 0;
    host_context.cores = 1;
    host_context.run = NULL;
    host_context.state = sim_core_at(0, 0);
  }
  return &host_context;
}

void sim_set_current(sim_context* context) {
  pthread_once(&context_key_once, make_context_key);
  if (pthread_setspecific(context_key, context) != 0) sim_fail("cannot set the thread-local core context");
}

int stowage_core_id(void) { return sim_current()->core; }

int stowage_num_cores(void) { return sim_current()->cores; }

void stowage_sim_compute(const char* what, uint64_t cycles) {
  sim_context* c = sim_current();
  sim_event e;
  if (cycles == 0u) return;
  memset(&e, 0, sizeof e);
  e.start = c->state->clock;
  e.end = e.start + cycles;
  e.name = what != NULL ? what : "compute";
  e.target = c->target;
  e.track_type = SIM_TRACK_CORE;
  e.core = c->core;
  e.kind = SIM_KIND_COMPUTE;
  sim_event_push(&c->state->events, &e);
  c->state->clock = e.end;
  c->state->compute_cycles += cycles;
  c->state->used = 1;
}

uint64_t stowage_sim_now(void) { return sim_current()->state->clock; }

void stowage_sim_reset(void) {
  int t, k;
  sim_context* c = sim_current();
  if (c->run != NULL) sim_fail("stowage_sim_reset called inside stowage_run_on_cores");
  for (t = 0; t < STOWAGE_SIM_MAX_TARGETS; ++t) {
    for (k = 0; k < STOWAGE_SIM_MAX_CORES; ++k) {
      sim_core_state* s = sim_targets[t].core[k];
      if (s == NULL) continue;
      sim_event_list_free(&s->events);
      free(s->ticket_end);
      free(s);
    }
  }
  memset(sim_targets, 0, sizeof sim_targets);
  host_context.state = NULL;
  sim_engine_reset();
  sim_pools_reset();
  sim_layers_reset();
}

void sim_wait_until(sim_context* c, uint64_t until, const char* why, uint64_t* counter) {
  sim_event e;
  if (until <= c->state->clock) return;
  memset(&e, 0, sizeof e);
  e.start = c->state->clock;
  e.end = until;
  e.name = why;
  e.target = c->target;
  e.track_type = SIM_TRACK_CORE;
  e.core = c->core;
  e.kind = SIM_KIND_WAIT;
  sim_event_push(&c->state->events, &e);
  *counter += until - c->state->clock;
  c->state->clock = until;
  c->state->used = 1;
}
