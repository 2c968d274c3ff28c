/*
 * topolab_direct_run.c - what an SMPI app says when it is run without smpirun.
 *
 * smpicc links an app as a shared object that smpirun's loader (smpimain) dlopens: it has no
 * program interpreter and entry address 0, so `build/bin/transpose -h` run directly jumped to
 * address 0 and died of SIGSEGV. Here the object gets the system's program interpreter and an
 * entry point (CMake links SMPI apps with -e tl_run_directly), so that run directly it prints one
 * line and exits 2. smpimain's dlopen ignores both: under smpirun nothing changes. smpicc
 * force-includes smpi/smpi_helpers.h, so SMPI_HELPERS_H marks an SMPI build; with a real MPI this
 * file is empty.
 */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#if defined(SMPI_HELPERS_H) && defined(__linux__)
#if defined(__x86_64__)
#define TL_INTERPRETER "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define TL_INTERPRETER "/lib/ld-linux-aarch64.so.1"
#endif
#endif

#ifdef TL_INTERPRETER
__attribute__((used, section(".interp"))) static const char interpreter[] = TL_INTERPRETER;

/* The entry point of a direct run: no argv, no libc start-up of a program, so only system calls
 * (and the stack realigned: the kernel enters with it 16-byte aligned, not as after a call). */
__attribute__((noreturn, force_align_arg_pointer)) void tl_run_directly(void)
{
    static const char message[] =
        ": error: this topolab app is built for SimGrid/SMPI: run it under smpirun, e.g. "
        "scripts/smpirun-on crossbar --hosts 4 -- build/bin/APP [ARGS] (README: smpirun-on)\n";
    char path[4096];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path);
    ssize_t start = length;
    while (start > 0 && path[start - 1] != '/')
        start--;
    ssize_t written = length > 0 ? write(STDERR_FILENO, path + start, (size_t)(length - start)) : 0;
    written = write(STDERR_FILENO, message, sizeof message - 1);
    (void)written;
    _exit(2);
}
#else
/* ISO C forbids an empty translation unit. */
typedef int tl_direct_run_unused;
#endif
