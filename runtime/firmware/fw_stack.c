/* fw_stack.c: measures the peak stack use of firmware by painting the free stack with a pattern
 * (stowage_fw_stack_paint, early in main) and later finding the lowest word that lost it (stowage_fw_stack_peak).
 * The stack spans [__stowage_stack_limit, __stowage_stack_top) as the generated linker script defines. C99. */
#if defined(__arm__) || defined(__riscv)

#include <stdint.h>

#include "stowage_fw.h"

extern uint32_t __stowage_stack_top[];
extern uint32_t __stowage_stack_limit[];

#define STACK_PATTERN 0x57AC57ACu /* also written literally in the assembly below */

/* In assembly, using no stack at all: a C version reads SP and then pushes its own registers below it, into the
 * range it paints (and a plain C loop may become a memset call with the same problem). */
__attribute__((naked)) void stowage_fw_stack_paint(void) {
#if defined(__arm__)
    __asm__ volatile(".syntax unified\n\t"
                     "ldr r0, =__stowage_stack_limit\n\t"
                     "mov r1, sp\n\t"
                     "ldr r2, =0x57AC57AC\n"
                     "1:\n\t"
                     "cmp r0, r1\n\t"
                     "bhs 2f\n\t"
                     "str r2, [r0]\n\t"
                     "adds r0, r0, #4\n\t"
                     "b 1b\n"
                     "2:\n\t"
                     "bx lr\n\t"
                     ".ltorg");
#else
    __asm__ volatile("lui t0, %hi(__stowage_stack_limit)\n\t"
                     "addi t0, t0, %lo(__stowage_stack_limit)\n\t"
                     "li t2, 0x57AC57AC\n"
                     "1:\n\t"
                     "bgeu t0, sp, 2f\n\t"
                     "sw t2, 0(t0)\n\t"
                     "addi t0, t0, 4\n\t"
                     "j 1b\n"
                     "2:\n\t"
                     "ret");
#endif
}

unsigned long stowage_fw_stack_peak(void) {
    const volatile uint32_t* word = (const volatile uint32_t*)__stowage_stack_limit;
    const volatile uint32_t* const top = (const volatile uint32_t*)__stowage_stack_top;
    while (word < top && *word == STACK_PATTERN) ++word;
    return (unsigned long)((uintptr_t)top - (uintptr_t)word);
}

#else
/* Other architecture: nothing (ISO C forbids an empty translation unit). */
typedef int stowage_fw_stack_unused;
#endif
