/* Seccomp bypass attempts through the other x86 syscall ABIs: the i386 one
 * (int $0x80) and x32 (syscall numbers with bit 30 set). Each call runs in a
 * child; the parent reports RESULT NAME=OK|ERRNO|SIG:SIGNAME. Only calls
 * with harmless effects are tried (unshare, ptrace(TRACEME), socket). */
#include "hostile.h"

#include <signal.h>
#include <sys/wait.h>

#if defined(__x86_64__)
static long i386_call(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
  return (long)(int)ret;
}

static long x32_call(long nr, long a, long b, long c) {
  long ret;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr | 0x40000000L), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}

static void attempt(const char *name, int abi, long nr, long a, long b, long c) {
  int pipefd[2];
  if (pipe(pipefd) != 0) return;
  pid_t p = fork();
  if (p == 0) {
    close(pipefd[0]);
    long r = abi == 32 ? i386_call(nr, a, b, c) : x32_call(nr, a, b, c);
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%s", r < 0 ? errname((int)-r) : "OK");
    write_all(pipefd[1], buf, (size_t)n);
    _exit(0);
  }
  close(pipefd[1]);
  char buf[64] = "";
  ssize_t n = read(pipefd[0], buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  close(pipefd[0]);
  int st = 0;
  waitpid(p, &st, 0);
  if (WIFSIGNALED(st)) {
    const char *s = sigabbrev_np(WTERMSIG(st));
    result("%s=SIG:SIG%s", name, s ? s : "?");
  } else {
    result("%s=%s", name, buf[0] ? buf : "NORESULT");
  }
}
#endif

int main(void) {
#if defined(__x86_64__)
  result("arch=x86_64");
  attempt("i386.unshare_user", 32, 310, 0x10000000, 0, 0);
  attempt("i386.ptrace_traceme", 32, 26, 0, 0, 0);
  attempt("i386.socket_inet", 32, 359, 2, 1, 0);
  attempt("x32.unshare_user", 64, 272, 0x10000000, 0, 0);
  attempt("x32.ptrace_traceme", 64, 521, 0, 0, 0);
  attempt("x32.socket_inet", 64, 41, 2, 1, 0);
#else
  result("arch=other");
#endif
  return 0;
}
