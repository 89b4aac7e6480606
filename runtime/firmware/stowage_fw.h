/* stowage_fw.h: the bare-metal support that ships with generated firmware (Cortex-M and RISC-V): console and
 * file access through semihosting, exit with a status, an instruction counter and a stack-use probe. The
 * generated linker script defines the __stowage_* symbols the startup files use (see README.md here). C99. */
#ifndef STOWAGE_FW_H
#define STOWAGE_FW_H

#ifdef __cplusplus
extern "C" {
#endif

/* Console text (semihosting SYS_WRITE0). */
void stowage_fw_write(const char* text);
/* `v` in decimal on the console (no libc, no 64-bit division helper). */
void stowage_fw_write_u64(unsigned long long v);
/* `v` as 0x followed by 8 hex digits on the console. */
void stowage_fw_write_hex32(unsigned long v);
/* The whole command line, program name included, NUL-terminated into buf (SYS_GET_CMDLINE). QEMU joins its
 * -semihosting-config arg=... values with single spaces. 0 ok, -1 error (including a too small buf). */
int stowage_fw_cmdline(char* buf, unsigned size);
/* Reads exactly `bytes` bytes of the host file `path` into dst; the file must hold exactly that many
 * (checked with SYS_FLEN). 0 ok, -1 error. */
int stowage_fw_read_file(const char* path, void* dst, unsigned bytes);
/* Creates or truncates the host file `path` and writes `bytes` bytes from src. 0 ok, -1 error. */
int stowage_fw_write_file(const char* path, const void* src, unsigned bytes);
/* Ends the program: QEMU exits with `code` (SYS_EXIT_EXTENDED; on RISC-V the virt test device as fallback). */
void stowage_fw_exit(int code)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* Instruction counting under `-icount shift=0` (1 instruction = 1 ns of virtual time). Cortex-M: SysTick on
 * the processor clock by default, or the CMSDK APB timer at STOWAGE_FW_COUNTER_CMSDK_TIMER (an address); the
 * tick frequency is STOWAGE_FW_COUNTER_HZ when defined, else calibrated once by timing a loop of known
 * length. RISC-V: minstret (exact). Interrupts must stay enabled between start and stop on Cortex-M/SysTick. */
void stowage_fw_counter_start(void);
/* Instructions executed since the last stowage_fw_counter_start. */
unsigned long long stowage_fw_counter_stop(void);
/* The timer's frequency in Hz as used by the counter (calibrated or given); 0 on RISC-V (minstret). */
unsigned long stowage_fw_counter_hz(void);

#if defined(STOWAGE_PROFILE_LAYERS)
/* Per-layer profile (fw_profile.c): start right after stowage_fw_counter_start, print after the run. */
void stowage_fw_profile_start(void);
void stowage_fw_profile_print(void);
#endif

/* Fills the unused stack, from __stowage_stack_limit up to just below the current SP, with a pattern. */
void stowage_fw_stack_paint(void);
/* Bytes of stack ever used: from __stowage_stack_top down to the lowest word not holding the pattern. */
unsigned long stowage_fw_stack_peak(void);

/* Internal: the boot-time copy / zero / poison tables (fw_boot_tables.c), run by the startup files. */
void stowage_fw_boot_tables(void);
/* Internal: one semihosting call (operation number, parameter) returning the host's answer. */
long stowage_fw_semihost(unsigned long op, void* param);

#ifdef __cplusplus
}
#endif

#endif
