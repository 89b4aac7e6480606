/* fw_startup_cortex_m.c: the Cortex-M vector table (section .isr_vector) and Reset_Handler: enable the FPU,
 * optionally trap unaligned accesses, set the v8-M stack limit, run the boot tables, call main, exit with its
 * status. Every other exception reports itself (name, stacked PC, fault registers) and exits nonzero. C99. */
#if defined(__arm__)

#include <stdint.h>

#include "stowage_fw.h"

extern uint32_t __stowage_stack_top[];
extern uint32_t __stowage_stack_limit[];
int main(void);

#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)
#define SCB_CCR (*(volatile uint32_t*)0xE000ED14u)
#define SCB_SHCSR (*(volatile uint32_t*)0xE000ED24u)
#define SCB_CFSR (*(volatile uint32_t*)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t*)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t*)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t*)0xE000ED38u)

#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define STOWAGE_FW_HAS_FAULT_REGISTERS 0
#else
#define STOWAGE_FW_HAS_FAULT_REGISTERS 1
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define STOWAGE_FW_HAS_MSPLIM 1
#else
#define STOWAGE_FW_HAS_MSPLIM 0
#endif

void Reset_Handler(void);
void stowage_fw_fault_entry(void);
void stowage_fw_fault_report(const uint32_t* frame, uint32_t ipsr);

/* Weak, so firmware (fw_counter.c's SysTick_Handler) may define its own. */
#define STOWAGE_FW_WEAK_HANDLER(name) void name(void) __attribute__((weak, alias("stowage_fw_fault_entry")))
STOWAGE_FW_WEAK_HANDLER(NMI_Handler);
STOWAGE_FW_WEAK_HANDLER(HardFault_Handler);
STOWAGE_FW_WEAK_HANDLER(MemManage_Handler);
STOWAGE_FW_WEAK_HANDLER(BusFault_Handler);
STOWAGE_FW_WEAK_HANDLER(UsageFault_Handler);
STOWAGE_FW_WEAK_HANDLER(SecureFault_Handler);
STOWAGE_FW_WEAK_HANDLER(SVC_Handler);
STOWAGE_FW_WEAK_HANDLER(DebugMon_Handler);
STOWAGE_FW_WEAK_HANDLER(PendSV_Handler);
STOWAGE_FW_WEAK_HANDLER(SysTick_Handler);

typedef void (*stowage_fw_vector)(void);
#define STOWAGE_FW_IRQ_VECTORS 32 /* no interrupt is enabled; a stray one still reports instead of jumping to 0 */
#define V4 stowage_fw_fault_entry, stowage_fw_fault_entry, stowage_fw_fault_entry, stowage_fw_fault_entry
#define V16 V4, V4, V4, V4

struct stowage_fw_vector_table {
    uint32_t* initial_sp;
    stowage_fw_vector handlers[15 + STOWAGE_FW_IRQ_VECTORS];
};

__attribute__((section(".isr_vector"), used)) const struct stowage_fw_vector_table stowage_fw_vectors = {
    __stowage_stack_top,
    {Reset_Handler, NMI_Handler, HardFault_Handler, MemManage_Handler, BusFault_Handler, UsageFault_Handler,
     SecureFault_Handler, stowage_fw_fault_entry, stowage_fw_fault_entry, stowage_fw_fault_entry, SVC_Handler,
     DebugMon_Handler, stowage_fw_fault_entry, PendSV_Handler, SysTick_Handler, V16, V16}};

void Reset_Handler(void) {
#if defined(__ARM_FP)
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11 full access: before any floating-point instruction */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
#if STOWAGE_FW_HAS_FAULT_REGISTERS
    SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18); /* MemManage, BusFault, UsageFault report as themselves */
#endif
#if defined(STOWAGE_FW_TRAP_UNALIGNED)
    SCB_CCR |= 1u << 3; /* UNALIGN_TRP */
#endif
#if STOWAGE_FW_HAS_MSPLIM && !defined(STOWAGE_FW_NO_STACK_LIMIT)
    /* A stack overflow below __stowage_stack_limit becomes a UsageFault (CFSR.STKOF) instead of corruption. */
    __asm__ volatile("msr msplim, %0" : : "r"(__stowage_stack_limit) : "memory");
#endif
    stowage_fw_boot_tables();
    stowage_fw_exit(main());
}

/* Every unexpected exception: find the stacked frame (MSP or PSP from EXC_RETURN), reset SP to the top of the
 * stack (the fault may be a stack overflow) and report. Plain Thumb-1 instructions: valid on every Cortex-M. */
__attribute__((naked)) void stowage_fw_fault_entry(void) {
    __asm__ volatile(".syntax unified\n\t" /* GCC emits inline asm as divided syntax for Thumb-1 (v6-M) */
                     "mov r0, lr\n\t"
                     "lsls r0, r0, #29\n\t"
                     "bmi 1f\n\t"
                     "mrs r0, msp\n\t"
                     "b 2f\n"
                     "1:\n\t"
                     "mrs r0, psp\n"
                     "2:\n\t"
                     "mrs r1, ipsr\n\t"
                     "ldr r2, =__stowage_stack_top\n\t"
                     "mov sp, r2\n\t"
                     "ldr r2, =stowage_fw_fault_report\n\t"
                     "bx r2\n\t"
                     ".ltorg");
}

static const char* exception_name(uint32_t number) {
    switch (number) {
    case 2: return "NMI";
    case 3: return "HardFault";
    case 4: return "MemManage fault";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case 7: return "SecureFault";
    case 11: return "SVCall";
    case 12: return "DebugMonitor";
    case 14: return "PendSV";
    case 15: return "SysTick";
    default: return number >= 16u ? "interrupt" : "reserved exception";
    }
}

__attribute__((noreturn, used)) void stowage_fw_fault_report(const uint32_t* frame, uint32_t ipsr) {
    const uint32_t number = ipsr & 0x1FFu;
    const uintptr_t low = (uintptr_t)__stowage_stack_limit, high = (uintptr_t)__stowage_stack_top;
#if STOWAGE_FW_HAS_FAULT_REGISTERS
    const uint32_t cfsr = SCB_CFSR, hfsr = SCB_HFSR, mmfar = SCB_MMFAR, bfar = SCB_BFAR;
#endif
    stowage_fw_write("\n*** stowage firmware: ");
    stowage_fw_write(exception_name(number));
    stowage_fw_write(" (exception ");
    stowage_fw_write_u64(number);
    stowage_fw_write(")");
    /* The frame is read only when it lies inside the stack: after an overflow it may not exist. */
    if ((uintptr_t)frame >= low && (uintptr_t)frame + 32u <= high && ((uintptr_t)frame & 3u) == 0u) {
        stowage_fw_write(" pc=");
        stowage_fw_write_hex32(frame[6]);
        stowage_fw_write(" lr=");
        stowage_fw_write_hex32(frame[5]);
    } else {
        stowage_fw_write(" sp=");
        stowage_fw_write_hex32((uintptr_t)frame);
        stowage_fw_write(" (outside the stack: no frame)");
    }
#if STOWAGE_FW_HAS_FAULT_REGISTERS
    stowage_fw_write(" cfsr=");
    stowage_fw_write_hex32(cfsr);
    stowage_fw_write(" hfsr=");
    stowage_fw_write_hex32(hfsr);
    if (cfsr & (1u << 7)) { /* MMARVALID */
        stowage_fw_write(" mmfar=");
        stowage_fw_write_hex32(mmfar);
    }
    if (cfsr & (1u << 15)) { /* BFARVALID */
        stowage_fw_write(" bfar=");
        stowage_fw_write_hex32(bfar);
    }
    if (cfsr & (1u << 24)) stowage_fw_write(" [unaligned access]");
    if (cfsr & (1u << 25)) stowage_fw_write(" [divide by zero]");
    if (cfsr & (1u << 20)) stowage_fw_write(" [stack overflow: below __stowage_stack_limit]");
    if (cfsr & (1u << 17)) stowage_fw_write(" [invalid state: jump to an even / non-Thumb address?]");
    if (cfsr & (1u << 16)) stowage_fw_write(" [undefined instruction]");
    if (cfsr & (1u << 0)) stowage_fw_write(" [instruction fetch from a protected / non-executable address]");
    if (cfsr & (1u << 8)) stowage_fw_write(" [instruction bus error]");
#endif
    stowage_fw_write("\n");
    stowage_fw_exit(128 + (int)(number < 127u ? number : 127u));
}

#else
/* Other architecture: nothing (ISO C forbids an empty translation unit). */
typedef int stowage_fw_startup_cortex_m_unused;
#endif
