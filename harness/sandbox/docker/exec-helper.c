/*
 * redgreen's exec helper for the Docker command server (server-python.ts): what a command's
 * process does between the server's vfork and the command, in a program small enough to cost
 * nothing to start (no libc, no dynamic loader). x86-64 Linux only. `npm run exec-helper` builds
 * it (exec-helper.sh) into exec-helper.ts, which the server carries; a test checks the two match.
 *
 *   exec-helper <cwd> <path>... "" <argv0> <arg>...     (the command's environment)
 *
 * Prefers to be killed out of memory (oom_score_adj 1000), becomes uid and gid 1000 with no
 * groups, goes to <cwd> and execs the first <path> that can be exec'd with <argv0> <arg>..., a
 * file without #! through /bin/sh (as env's execvp does). Failing, it writes its stage and errno
 * as two bytes to fd 3 ('c' cd, 'x' exec, 'i' ids), for the server to say it as env would, and
 * exits as env does: 125 (cd), 126 (cannot run), 127 (not found, ids). fd 3 is closed on exec,
 * so the server reads nothing once the command runs.
 */
/* SANDBOX_UID and SANDBOX_GID of config.ts (a test compares what a command sees with the sh server's). */
#define UID 1000
#define GID 1000

static long sys(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
enum { WRITE = 1, OPEN = 2, CLOSE = 3, FCNTL = 72, EXECVE = 59, CHDIR = 80, SETGROUPS = 116, SETRESUID = 117, SETRESGID = 119, EXIT = 231 };
enum { ENOENT = 2, ENOEXEC = 8, ENOTDIR = 20 };

static void fail(char stage, long err, long code) {
  char b[2] = {stage, (char)-err};
  sys(WRITE, 3, (long)b, 2);
  for (;;) sys(EXIT, code, 0, 0);
}

__attribute__((used)) static void start(long *sp) {
  char **argv = (char **)(sp + 1), **envp = argv + sp[0] + 1;
  sys(FCNTL, 3, 2 /* F_SETFD */, 1 /* FD_CLOEXEC */);
  long fd = sys(OPEN, (long)"/proc/self/oom_score_adj", 1 /* O_WRONLY */, 0);
  if (fd >= 0) {
    sys(WRITE, fd, (long)"1000", 4);
    sys(CLOSE, fd, 0, 0);
  }
  long r = sys(SETGROUPS, 0, 0, 0);
  if (!r) r = sys(SETRESGID, GID, GID, GID);
  if (!r) r = sys(SETRESUID, UID, UID, UID);
  if (r) fail('i', r, 127);
  if ((r = sys(CHDIR, (long)argv[1], 0, 0)) < 0) fail('c', r, 125);
  long k = 2;
  while (argv[k] && argv[k][0]) k++;
  if (!argv[k] || !argv[k + 1]) fail('x', -ENOENT, 127);
  char **args = argv + k + 1, *name = args[0];
  long first = 0;
  for (long i = 2; i < k; i++) {
    r = sys(EXECVE, (long)argv[i], (long)args, (long)envp);
    if (r == -ENOEXEC) {
      args[-1] = "/bin/sh";
      args[0] = argv[i];
      r = sys(EXECVE, (long)"/bin/sh", (long)(args - 1), (long)envp);
      args[0] = name;
    }
    if (r != -ENOENT && r != -ENOTDIR && !first) first = r;
  }
  fail('x', first ? first : -ENOENT, first ? 126 : 127);
}

__asm__(".globl _start\n_start:\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call start\n");
