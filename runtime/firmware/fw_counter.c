/* fw_counter.c: counts executed instructions between stowage_fw_counter_start and _stop when QEMU runs with
 * `-icount shift=0` (one instruction = 1 ns of virtual time). RISC-V reads minstret (exact). Cortex-M reads a
 * timer and converts ticks to ns: SysTick on the processor clock (default; every Cortex-M has it; 24 bits, so
 * SysTick_Handler counts wraps) or the CMSDK APB timer at STOWAGE_FW_COUNTER_CMSDK_TIMER (mps2 boards; 32 bits,
 * no wrap handling: up to 2^32 ticks). The tick rate is STOWAGE_FW_COUNTER_HZ when given, else it is
 * calibrated once by timing a loop of 2,000,000 instructions and rounding to a multiple of 100 kHz. C99. */
#if defined(__arm__) || defined(__riscv)

#include <stdint.h>

#include "stowage_fw.h"

static uint64_t start_count;

#if defined(__riscv)

#define STOWAGE_FW_ZICSR(insn) ".option push\n\t.option arch, +zicsr\n\t" insn "\n\t.option pop\n\t"

static uint64_t read_minstret(void) {
#if __riscv_xlen == 64
    uint64_t value;
    __asm__ volatile(STOWAGE_FW_ZICSR("csrr %0, minstret") : "=r"(value));
    return value;
#else
    uint32_t high, low, again;
    do {
        __asm__ volatile(STOWAGE_FW_ZICSR("csrr %0, minstreth") : "=r"(high));
        __asm__ volatile(STOWAGE_FW_ZICSR("csrr %0, minstret") : "=r"(low));
        __asm__ volatile(STOWAGE_FW_ZICSR("csrr %0, minstreth") : "=r"(again));
    } while (high != again);
    return ((uint64_t)high << 32) | low;
#endif
}

void stowage_fw_counter_start(void) {
    start_count = read_minstret();
}

unsigned long long stowage_fw_counter_stop(void) {
    return read_minstret() - start_count;
}

unsigned long stowage_fw_counter_hz(void) {
    return 0;
}

#else /* __arm__ */

#if defined(STOWAGE_FW_COUNTER_CMSDK_TIMER)
#define TIMER_CTRL (*(volatile uint32_t*)((uintptr_t)(STOWAGE_FW_COUNTER_CMSDK_TIMER) + 0x0u))
#define TIMER_VALUE (*(volatile uint32_t*)((uintptr_t)(STOWAGE_FW_COUNTER_CMSDK_TIMER) + 0x4u))
#define TIMER_RELOAD (*(volatile uint32_t*)((uintptr_t)(STOWAGE_FW_COUNTER_CMSDK_TIMER) + 0x8u))

static void timer_run(void) {
    TIMER_CTRL = 0u;
    TIMER_RELOAD = 0xFFFFFFFFu;
    TIMER_VALUE = 0xFFFFFFFFu;
    TIMER_CTRL = 1u; /* enable, no interrupt */
}

static uint64_t timer_ticks(void) {
    return 0xFFFFFFFFu - TIMER_VALUE;
}

#else
#define SYST_CSR (*(volatile uint32_t*)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t*)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t*)0xE000E018u)

static volatile uint32_t systick_wraps;

/* Overrides the weak one of fw_startup_cortex_m.c. One wrap every 2^24 ticks (0.67 s of virtual time at
 * 25 MHz) adds this handler's few instructions to a measurement spanning it. */
void SysTick_Handler(void);
void SysTick_Handler(void) {
    systick_wraps = systick_wraps + 1u;
}

static void timer_run(void) {
    SYST_CSR = 0u;
    systick_wraps = 0u;
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0u;     /* any write clears the count; it reloads on the next tick */
    SYST_CSR = 7u;     /* ENABLE | TICKINT | CLKSOURCE = processor clock */
}

/* Ticks since timer_run: the count goes 0, 0xFFFFFF, ... 1, 0 (wrap interrupt), 0xFFFFFF, ...; the wraps are
 * re-read until stable so that an interrupt between the two reads cannot pair an old count with a new value. */
static uint64_t timer_ticks(void) {
    uint32_t wraps, value;
    do {
        wraps = systick_wraps;
        value = SYST_CVR;
    } while (wraps != systick_wraps);
    return ((uint64_t)wraps << 24) + ((0x1000000u - value) & 0xFFFFFFu);
}
#endif

static uint32_t tick_hz;       /* 0 until the first start */
static uint32_t ns_numerator;  /* ns per tick = ns_numerator / ns_denominator, reduced */
static uint32_t ns_denominator;

#if !defined(STOWAGE_FW_COUNTER_HZ)
#define CALIBRATION_LOOPS 1000000u /* subs + bne: 2 instructions per loop */

static void spin(uint32_t loops) {
    __asm__ volatile(".syntax unified\n"
                     "1:\n\t"
                     "subs %0, %0, #1\n\t"
                     "bne 1b"
                     : "+r"(loops)
                     :
                     : "cc");
}
#endif

static uint32_t calibrated_hz(void) {
#if defined(STOWAGE_FW_COUNTER_HZ)
    return (uint32_t)(STOWAGE_FW_COUNTER_HZ);
#else
    const uint64_t before = timer_ticks();
    uint32_t ticks;
    spin(CALIBRATION_LOOPS);
    ticks = (uint32_t)(timer_ticks() - before);
    /* ticks per 2 ms of virtual time -> Hz, rounded to a multiple of 100 kHz (25 MHz on mps2, 32 MHz on an547):
     * good to 1 tick in 500 or better for any rate from 100 kHz up, so the rounding lands on the exact rate. */
    return (ticks * 500u + 50000u) / 100000u * 100000u;
#endif
}

static uint32_t gcd32(uint32_t a, uint32_t b) {
    while (b != 0u) {
        const uint32_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* 64 by 32 bit unsigned division by shift and subtract: no libgcc helper. */
static uint64_t divide(uint64_t n, uint32_t d, uint32_t* remainder) {
    uint64_t quotient = 0u, rest = 0u;
    int bit;
    for (bit = 63; bit >= 0; --bit) {
        rest = (rest << 1) | ((n >> bit) & 1u);
        if (rest >= d) {
            rest -= d;
            quotient |= (uint64_t)1u << bit;
        }
    }
    *remainder = (uint32_t)rest;
    return quotient;
}

void stowage_fw_counter_start(void) {
    if (tick_hz == 0u) {
        uint32_t g;
        timer_run();
        tick_hz = calibrated_hz();
        if (tick_hz == 0u) tick_hz = 1u; /* timer not running (no -icount?): counts are meaningless */
        g = gcd32(1000000000u, tick_hz);
        ns_numerator = 1000000000u / g;
        ns_denominator = tick_hz / g;
    }
    start_count = timer_ticks();
}

unsigned long long stowage_fw_counter_stop(void) {
    const uint64_t ticks = timer_ticks() - start_count;
    uint32_t rest;
    const uint64_t whole = divide(ticks, ns_denominator, &rest);
    /* ticks * numerator / denominator, rounded to nearest, without overflow for any realistic run */
    return whole * ns_numerator + ((uint64_t)rest * ns_numerator + ns_denominator / 2u) / ns_denominator;
}

unsigned long stowage_fw_counter_hz(void) {
    return tick_hz;
}

#endif /* __arm__ */

#else
/* Other architecture: nothing (ISO C forbids an empty translation unit). */
typedef int stowage_fw_counter_unused;
#endif
