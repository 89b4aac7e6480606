/* Host simulator side of guard mode: a failed check prints which tensor, what and at which step, then aborts
 * (so `stowage run` reports it with the program's output). Host code. */
#include <stdio.h>
#include <stdlib.h>

#include "stowage_hal.h"

void stowage_guard_fail(const char* tensor, const char* what, int step) {
  fprintf(stderr, "stowage guard: tensor '%s': %s (step %d)\n", tensor, what, step);
  fflush(stderr);
  abort();
}
