/* fw_startup_riscv.c: the RISC-V entry _start (section .text.init, machine mode): set sp (and gp when the
 * linker script defines __global_pointer$), install the trap handler, run the boot tables, call main, exit with
 * its status. A trap reports mcause, mepc and mtval and exits nonzero. C99. */
#if defined(__riscv)

#include <stdint.h>

#include "stowage_fw.h"

extern uint32_t __stowage_stack_top[];
extern uint32_t __stowage_stack_limit[];
int main(void);

/* CSR instructions need Zicsr, which -march=rv32imac does not name with GCC 12 / binutils 2.40 (and adding
 * _zicsr to -march breaks picolibc's multilib choice): enable it for the one instruction. */
#define STOWAGE_FW_ZICSR(insn) ".option push\n\t.option arch, +zicsr\n\t" insn "\n\t.option pop\n\t"

void _start(void);
void stowage_fw_trap_entry(void);
void stowage_fw_boot(void);
void stowage_fw_trap_report(void);

/* gp is loaded only if the script defines __global_pointer$ (weak: 0 otherwise), absolutely (lui/addi), with
 * relaxation off so the linker cannot rewrite this very load relative to gp. */
__attribute__((naked, section(".text.init"))) void _start(void) {
    __asm__ volatile(".option push\n\t"
                     ".option norelax\n\t"
                     ".weak __global_pointer$\n\t"
                     "lui gp, %hi(__global_pointer$)\n\t"
                     "addi gp, gp, %lo(__global_pointer$)\n\t"
                     "lui sp, %hi(__stowage_stack_top)\n\t"
                     "addi sp, sp, %lo(__stowage_stack_top)\n\t"
                     "lui t0, %hi(stowage_fw_trap_entry)\n\t"
                     "addi t0, t0, %lo(stowage_fw_trap_entry)\n\t"
                     STOWAGE_FW_ZICSR("csrw mtvec, t0")
                     STOWAGE_FW_ZICSR("csrw mscratch, zero")
                     "tail stowage_fw_boot\n\t"
                     ".option pop");
}

/* mtvec direct mode needs 4-byte alignment. sp back to the top of the stack: the trap may be an overflow.
 * mscratch (0 from _start) marks a report in progress: a trap inside the report (memory too damaged to print)
 * exits at once through the virt test device with status 255 instead of looping. */
__attribute__((naked, aligned(4))) void stowage_fw_trap_entry(void) {
    __asm__ volatile(".option push\n\t"
                     ".option norelax\n\t"
                     STOWAGE_FW_ZICSR("csrrwi t0, mscratch, 1")
                     "beqz t0, 1f\n\t"
                     "lui t0, 0x100\n\t"
                     "lui t1, 0xff3\n\t"
                     "addi t1, t1, 0x333\n\t"
                     "sw t1, 0(t0)\n"
                     "2:\n\t"
                     "j 2b\n"
                     "1:\n\t"
                     "lui sp, %hi(__stowage_stack_top)\n\t"
                     "addi sp, sp, %lo(__stowage_stack_top)\n\t"
                     ".option pop\n\t"
                     "tail stowage_fw_trap_report");
}

__attribute__((noreturn, used)) void stowage_fw_boot(void) {
#if defined(__riscv_flen)
    unsigned long fs = 1ul << 13; /* mstatus.FS = Initial: floating point on */
    __asm__ volatile(STOWAGE_FW_ZICSR("csrs mstatus, %0") : : "r"(fs));
#endif
    stowage_fw_boot_tables();
    stowage_fw_exit(main());
}

static const char* cause_name(unsigned long cause) {
    switch (cause) {
    case 0: return "instruction address misaligned";
    case 1: return "instruction access fault";
    case 2: return "illegal instruction";
    case 3: return "breakpoint";
    case 4: return "load address misaligned";
    case 5: return "load access fault";
    case 6: return "store address misaligned";
    case 7: return "store access fault";
    case 11: return "environment call from M-mode";
    default: return "trap";
    }
}

__attribute__((noreturn, used)) void stowage_fw_trap_report(void) {
    unsigned long cause, epc, tval;
    __asm__ volatile(STOWAGE_FW_ZICSR("csrr %0, mcause") : "=r"(cause));
    __asm__ volatile(STOWAGE_FW_ZICSR("csrr %0, mepc") : "=r"(epc));
    __asm__ volatile(STOWAGE_FW_ZICSR("csrr %0, mtval") : "=r"(tval));
    if (cause == 3u) {
        /* An ebreak trapped: semihosting is off (or not recognised), so nothing can be printed. Exit through
         * the virt machine's test device with status 128 + 3. */
        *(volatile uint32_t*)0x100000u = (131u << 16) | 0x3333u;
        for (;;) {
        }
    }
    stowage_fw_write("\n*** stowage firmware: ");
    if ((long)cause < 0) {
        stowage_fw_write("interrupt");
    } else {
        stowage_fw_write(cause_name(cause));
    }
    stowage_fw_write(" (mcause ");
    stowage_fw_write_hex32(cause);
    stowage_fw_write(") pc=");
    stowage_fw_write_hex32(epc);
    stowage_fw_write(" mtval=");
    stowage_fw_write_hex32(tval);
    stowage_fw_write("\n");
    stowage_fw_exit((long)cause < 0 ? 255 : 128 + (int)(cause & 63u));
}

#else
/* Other architecture: nothing (ISO C forbids an empty translation unit). */
typedef int stowage_fw_startup_riscv_unused;
#endif
