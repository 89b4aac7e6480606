/* fw_boot_tables.c: the memory set-up both startup files run before main, driven by the tables the generated
 * linker script emits: copy (.data and RAM-resident constants from their load addresses), zero (.bss), and,
 * when built with -DSTOWAGE_FW_POISON=<byte>, fill the workspace pools left uninitialised (NOLOAD). C99. */
#if defined(__arm__) || defined(__riscv)

#include <stdint.h>

#include "stowage_fw.h"

extern const uint32_t __stowage_copy_table_start[], __stowage_copy_table_end[];
extern const uint32_t __stowage_zero_table_start[], __stowage_zero_table_end[];
extern const uint32_t __stowage_poison_table_start[], __stowage_poison_table_end[];

/* Volatile pointers throughout: GCC must not turn these loops into memcpy/memset calls (the C library may not
 * be usable yet, and a call would hide what the boot touches). Whole words when every bound is aligned. */
static void copy_range(uint32_t load, uint32_t start, uint32_t end) {
    if (((load | start | end) & 3u) == 0u) {
        const volatile uint32_t* from = (const volatile uint32_t*)(uintptr_t)load;
        volatile uint32_t* to = (volatile uint32_t*)(uintptr_t)start;
        volatile uint32_t* const stop = (volatile uint32_t*)(uintptr_t)end;
        while (to < stop) *to++ = *from++;
    } else {
        const volatile uint8_t* from = (const volatile uint8_t*)(uintptr_t)load;
        volatile uint8_t* to = (volatile uint8_t*)(uintptr_t)start;
        volatile uint8_t* const stop = (volatile uint8_t*)(uintptr_t)end;
        while (to < stop) *to++ = *from++;
    }
}

static void fill_range(uint32_t start, uint32_t end, uint8_t byte) {
    volatile uint8_t* at = (volatile uint8_t*)(uintptr_t)start;
    volatile uint8_t* const stop = (volatile uint8_t*)(uintptr_t)end;
    const uint32_t word = byte * 0x01010101u;
    while (at < stop && ((uintptr_t)at & 3u) != 0u) *at++ = byte;
    {
        volatile uint32_t* w = (volatile uint32_t*)(uintptr_t)at;
        volatile uint32_t* const wstop = (volatile uint32_t*)((uintptr_t)stop & ~(uintptr_t)3u);
        while (w < wstop) *w++ = word;
        at = (volatile uint8_t*)w;
    }
    while (at < stop) *at++ = byte;
}

void stowage_fw_boot_tables(void) {
    const uint32_t* entry;
    for (entry = __stowage_copy_table_start; entry + 3 <= __stowage_copy_table_end; entry += 3)
        if (entry[0] != entry[1]) copy_range(entry[0], entry[1], entry[2]);
    for (entry = __stowage_zero_table_start; entry + 2 <= __stowage_zero_table_end; entry += 2)
        fill_range(entry[0], entry[1], 0u);
#if defined(STOWAGE_FW_POISON)
    for (entry = __stowage_poison_table_start; entry + 2 <= __stowage_poison_table_end; entry += 2)
        fill_range(entry[0], entry[1], (uint8_t)(STOWAGE_FW_POISON));
#endif
}

#else
/* Other architecture: nothing (ISO C forbids an empty translation unit). */
typedef int stowage_fw_boot_tables_unused;
#endif
