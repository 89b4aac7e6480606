/* Device side of guard mode (stowage compile --guard): a failed canary, poison or checksum check prints which tensor,
 * what and at which step through the firmware console, then ends the program with exit code 75. Weak, so an
 * application can route it to its own error handling. C99. */
#include "stowage_fw.h"
#include "stowage_hal.h"

#if defined(__GNUC__)
__attribute__((weak))
#endif
void stowage_guard_fail(const char* tensor, const char* what, int step) {
  stowage_fw_write("stowage guard: tensor '");
  stowage_fw_write(tensor);
  stowage_fw_write("': ");
  stowage_fw_write(what);
  stowage_fw_write(" (step ");
  stowage_fw_write_u64((unsigned long long)(step < 0 ? 0 : step));
  stowage_fw_write(")\n");
  stowage_fw_exit(75);
}
