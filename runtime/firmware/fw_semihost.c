/* fw_semihost.c: semihosting for Arm (BKPT 0xAB) and RISC-V (slli/ebreak/srai) and what firmware builds on
 * it: console text, decimal and hex numbers, the command line, whole-file read and write, and exit. C99. */
#if defined(__arm__) || defined(__riscv)

#include <stdint.h>

#include "stowage_fw.h"

enum {
    SYS_OPEN = 0x01,
    SYS_CLOSE = 0x02,
    SYS_WRITE0 = 0x04,
    SYS_WRITE = 0x05,
    SYS_READ = 0x06,
    SYS_FLEN = 0x0C,
    SYS_GET_CMDLINE = 0x15,
    SYS_EXIT_EXTENDED = 0x20
};
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define OPEN_MODE_RB 1u
#define OPEN_MODE_WB 5u

long stowage_fw_semihost(unsigned long op, void* param) {
#if defined(__arm__)
    register unsigned long r0 __asm__("r0") = op;
    register void* r1 __asm__("r1") = param;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return (long)r0;
#else
    /* The three instructions must be uncompressed and in one page (16-byte aligned): QEMU reads the neighbours of
     * the ebreak to tell a semihosting call from a breakpoint. */
    register unsigned long a0 __asm__("a0") = op;
    register void* a1 __asm__("a1") = param;
    __asm__ volatile(".option push\n\t"
                     ".balign 16\n\t" /* before norvc: the padding may need a 2-byte c.nop */
                     ".option norvc\n\t"
                     "slli x0, x0, 0x1f\n\t"
                     "ebreak\n\t"
                     "srai x0, x0, 7\n\t"
                     ".option pop"
                     : "+r"(a0)
                     : "r"(a1)
                     : "memory");
    return (long)a0;
#endif
}

void stowage_fw_write(const char* text) {
    stowage_fw_semihost(SYS_WRITE0, (void*)(uintptr_t)text);
}

void stowage_fw_write_u64(unsigned long long v) {
    /* Digits by subtracting powers of ten: no __aeabi_uldivmod / __udivdi3 needed. */
    static const unsigned long long powers[20] = {10000000000000000000ull, 1000000000000000000ull,
        100000000000000000ull, 10000000000000000ull, 1000000000000000ull, 100000000000000ull, 10000000000000ull,
        1000000000000ull, 100000000000ull, 10000000000ull, 1000000000ull, 100000000ull, 10000000ull, 1000000ull,
        100000ull, 10000ull, 1000ull, 100ull, 10ull, 1ull};
    char text[21];
    unsigned n = 0, i = 0;
    while (i < 19u && powers[i] > v) ++i;
    for (; i < 20u; ++i) {
        char digit = '0';
        while (v >= powers[i]) {
            v -= powers[i];
            ++digit;
        }
        text[n++] = digit;
    }
    text[n] = '\0';
    stowage_fw_write(text);
}

void stowage_fw_write_hex32(unsigned long v) {
    static const char hex[] = "0123456789abcdef";
    char text[11];
    int i;
    text[0] = '0';
    text[1] = 'x';
    for (i = 0; i < 8; ++i) text[2 + i] = hex[(v >> (28 - 4 * i)) & 0xFu];
    text[10] = '\0';
    stowage_fw_write(text);
}

int stowage_fw_cmdline(char* buf, unsigned size) {
    uintptr_t block[2];
    if (buf == 0 || size == 0u) return -1;
    block[0] = (uintptr_t)buf;
    block[1] = size;
    if (stowage_fw_semihost(SYS_GET_CMDLINE, block) != 0) return -1;
    if (block[1] >= size) return -1;
    buf[block[1]] = '\0';
    return 0;
}

static unsigned cstring_length(const char* text) {
    unsigned n = 0;
    while (text[n] != '\0') ++n;
    return n;
}

static long open_file(const char* path, unsigned long mode) {
    uintptr_t block[3];
    block[0] = (uintptr_t)path;
    block[1] = mode;
    block[2] = cstring_length(path);
    return stowage_fw_semihost(SYS_OPEN, block);
}

static void close_file(long handle) {
    uintptr_t block[1];
    block[0] = (uintptr_t)handle;
    stowage_fw_semihost(SYS_CLOSE, block);
}

int stowage_fw_read_file(const char* path, void* dst, unsigned bytes) {
    uintptr_t block[3];
    long handle = open_file(path, OPEN_MODE_RB);
    int status = -1;
    if (handle < 0) return -1;
    block[0] = (uintptr_t)handle;
    if (stowage_fw_semihost(SYS_FLEN, block) == (long)bytes) {
        block[0] = (uintptr_t)handle;
        block[1] = (uintptr_t)dst;
        block[2] = bytes;
        /* SYS_READ answers the number of bytes NOT read. */
        if (stowage_fw_semihost(SYS_READ, block) == 0) status = 0;
    }
    close_file(handle);
    return status;
}

int stowage_fw_write_file(const char* path, const void* src, unsigned bytes) {
    uintptr_t block[3];
    long handle = open_file(path, OPEN_MODE_WB);
    int status = 0;
    if (handle < 0) return -1;
    if (bytes != 0u) {
        block[0] = (uintptr_t)handle;
        block[1] = (uintptr_t)src;
        block[2] = bytes;
        /* SYS_WRITE answers the number of bytes NOT written. */
        if (stowage_fw_semihost(SYS_WRITE, block) != 0) status = -1;
    }
    close_file(handle);
    return status;
}

void stowage_fw_exit(int code) {
    uintptr_t block[2];
    block[0] = ADP_STOPPED_APPLICATION_EXIT;
    block[1] = (uintptr_t)(intptr_t)code;
    stowage_fw_semihost(SYS_EXIT_EXTENDED, block);
#if defined(__riscv)
    /* Semihosting off: the QEMU virt machine's test device (SiFive test finisher) at 0x100000. */
    *(volatile uint32_t*)0x100000u = code == 0 ? 0x5555u : (((uint32_t)code & 0xFFFFu) << 16) | 0x3333u;
#endif
    for (;;) {
    }
}

#else
/* Other architecture: nothing (ISO C forbids an empty translation unit). */
typedef int stowage_fw_semihost_unused;
#endif
