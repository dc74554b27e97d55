import { LINK_MOUNT, SANDBOX_GID, SANDBOX_UID } from './config.js';
import { MEMORY_FILES, MOUNTS, PIDS_FILES } from './limit-probe.js';
import { FULL_BELOW_BYTES } from '../core/limits.js';
import { PYTHON_FILE_OPS } from './server-python-files.js';

/**
 * The command server of server-script.ts, in Python: what the sh server hands over to when the
 * image has python3, for speed (a Python older than 3.5, or without what this needs, starts the
 * sh server again instead, before a word is said). Same requests, same frames, same guarantees; what
 * it saves is processes. The sh server starts every command through a runner subshell, setpriv
 * and env (and a put through two more subshells and a `head` per chunk); this one forks once, and
 * the child drops to the sandbox user, goes to the folder, sets the environment and default
 * signal handling, and execs the command. The harness's file work (uploads, writes, reads, the
 * reset between sandboxes) starts no process at all (server-python-files.ts). In the runtime image
 * a small fixture's five requests (upload, RED, patch, GREEN, reset) take about 10 ms of the
 * container's CPU this way, 36 ms through the sh server. After a failure it asks statvfs, not df.
 *
 * The words of a request are the harness's own (command-server.ts: requestWords, shellWord): a
 * command's are `env -i --chdir=<cwd> --default-signal <VAR=value>… <argv>…`, which this server
 * does itself, failing as env would (its messages and exit codes 125, 126, 127) and running a
 * file without `#!` through /bin/sh as env's execvp does; any other words run as they are, in the
 * server's environment, from /. Killing and sweeping are the sh server's: what the sandbox user
 * runs is killed by a child that becomes that user and signals every process it may (kill -1);
 * the server, root without CAP_KILL, can be signalled by none of them.
 */
export const PYTHON_SERVER = String.raw`import os, sys
try:
    import select, signal, stat
    os.set_blocking, os.environb, os.scandir, signal.pthread_sigmask, signal.set_wakeup_fd
except (ImportError, AttributeError):
    # A Python older than 3.5, or one without these: the sh server instead (its script comes last).
    os.execv('/bin/sh', ['/bin/sh', '-c', sys.argv[-1], 'redgreen-server'])
UID, GID = ${SANDBOX_UID}, ${SANDBOX_GID}
MEMORY_FILES = ${JSON.stringify(MEMORY_FILES)}
PIDS_FILES = ${JSON.stringify(PIDS_FILES)}
MOUNTS = ${JSON.stringify(MOUNTS.map(([m]) => m))}
FULL_BELOW = ${FULL_BELOW_BYTES}
LINK = '${LINK_MOUNT}'
SELF = os.getpid()
NL = b'\n'
buf = bytearray()
wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False)
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *a: None)
# What a command must get back to default: the dispositions not default here (handled or ignored,
# inherited or Python's own), found once instead of trying every signal for each command.
NOT_DEFAULT = [s for s in range(1, signal.NSIG) if signal.getsignal(s) not in (signal.SIG_DFL, None)]

def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]

def fill():
    chunk = os.read(0, 65536)
    if not chunk:
        os._exit(0)
    buf.extend(chunk)

def readline():
    while True:
        i = buf.find(NL)
        if i >= 0:
            line = bytes(buf[:i])
            del buf[:i + 1]
            return line
        fill()

def words(s):
    out, cur, i = [], None, 0
    while i < len(s):
        c = s[i:i + 1]
        if c == b' ':
            if cur is not None:
                out.append(cur)
            cur, i = None, i + 1
        elif c == b"'":
            j = s.index(b"'", i + 1)
            cur, i = (cur or b'') + s[i + 1:j], j + 1
        elif c == b'\\':
            cur, i = (cur or b'') + s[i + 1:i + 2], i + 2
        elif s.startswith(b'"$NL"', i):
            cur, i = (cur or b'') + NL, i + 5
        else:
            raise ValueError('not a word')
    if cur is not None:
        out.append(cur)
    return out

def become_user():
    os.setgroups([])
    os.setgid(GID)
    os.setuid(UID)

def slurp(path):
    # Small /proc and cgroup files, without Python's file objects (a command pays for each).
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 65536)
    finally:
        os.close(fd)

def prefer_to_kill():
    # The kernel's OOM killer picks the largest process: a command, never the server (11 MB here).
    try:
        fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)
        try:
            os.write(fd, b'1000')
        finally:
            os.close(fd)
    except OSError:
        pass

def quoted(b):
    # As env quotes a name: curly quotes in a UTF-8 locale (the server's, which env would start in).
    locale = [os.environ.get(k) for k in ('LC_ALL', 'LC_CTYPE', 'LANG') if os.environ.get(k)]
    utf8 = bool(locale) and locale[0].lower().replace('-', '').endswith('utf8')
    left, right = ('\u2018', '\u2019') if utf8 else ("'", "'")
    return left + b.decode('utf-8', 'replace') + right

def fail(message, code):
    try:
        write_all(2, ('env: ' + message + chr(10)).encode())
    finally:
        os._exit(code)

def child(argv, stdin_fd):
    try:
        out = os.open('/proc/self/fd/1', os.O_WRONLY)
        err = os.open('/proc/self/fd/2', os.O_WRONLY)
        os.dup2(stdin_fd, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        prefer_to_kill()
        become_user()
        for s in NOT_DEFAULT:
            signal.signal(s, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        env = None
        if len(argv) > 4 and argv[:2] == [b'env', b'-i'] and argv[2].startswith(b'--chdir=') and argv[3] == b'--default-signal':
            cwd, rest, env = argv[2][8:], argv[4:], {}
            while rest and b'=' in rest[0]:
                k, _, v = rest.pop(0).partition(b'=')
                env[k] = v
            argv = rest
            try:
                os.chdir(cwd)
            except OSError as e:
                fail('cannot change directory to ' + quoted(cwd) + ': ' + os.strerror(e.errno), 125)
        else:
            os.chdir('/')
        run_program(argv, os.environb if env is None else env)
    except BaseException as e:
        try:
            write_all(2, ('redgreen-server: ' + str(e) + chr(10)).encode())
        except BaseException:
            pass
    os._exit(127)

def run_program(argv, env):
    if not argv:
        fail('no command', 125)
    name = argv[0]
    if b'/' in name:
        places = [name]
    else:
        path = env.get(b'PATH', b'/bin:/usr/bin')
        places = [os.path.join(d or b'.', name) for d in path.split(b':')]
    first = None
    for p in places:
        try:
            os.execve(p, argv, env)
        except OSError as e:
            if e.errno == 8:
                try:
                    os.execve(b'/bin/sh', [b'/bin/sh', p] + argv[1:], env)
                except OSError as e2:
                    e = e2
            if e.errno not in (2, 20) and first is None:
                first = e
    e = first or OSError(2, os.strerror(2))
    fail(quoted(name) + ': ' + os.strerror(e.errno), 127 if e.errno == 2 else 126)

${PYTHON_FILE_OPS}
def exit_code(status):
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)

def sweep():
    try:
        pid = os.fork()
    except OSError:
        # No process to spare (a fork bomb holds the pids limit, retrying as pids free): kill from
        # here, with the sandbox user's effective id. The real id stays root, so no sandbox process
        # may signal the server meanwhile; kill -1 spares init and the server, the container's only
        # other root processes. A fork that fails costs a copy of the server first (a bomb's retries
        # made each of these rounds about 10 ms).
        try:
            os.seteuid(UID)
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        finally:
            try:
                os.seteuid(0)
            except BaseException:
                os._exit(70)
        return
    if pid == 0:
        try:
            become_user()
            os.kill(-1, signal.SIGKILL)
        except BaseException:
            pass
        os._exit(0)
    os.waitpid(pid, 0)

def left():
    zombie = False
    for name in os.listdir('/proc'):
        if not name.isdigit() or int(name) in (1, SELF):
            continue
        try:
            stat = slurp('/proc/' + name + '/stat')
        except OSError:
            continue
        state = stat[stat.rindex(b')') + 2:][:1]
        if state in (b'Z', b'X'):
            zombie = True
        else:
            return 'live'
    return 'zombie' if zombie else None

def counter(files, key):
    for name in files:
        try:
            lines = slurp(name).decode().split(chr(10))
        except OSError:
            continue
        for line in lines:
            k, _, v = line.partition(' ')
            if k == key:
                return v
        return None
    return None

def full_mount():
    for m in MOUNTS:
        try:
            s = os.statvfs(m)
        except OSError:
            continue
        if s.f_bavail * s.f_frsize < FULL_BELOW:
            return m
    return None

class Chunks:
    """A put's input as it comes (chunks: a <length> line, then that many bytes; 0 ends them)."""
    def __init__(self):
        self.left, self.done = 0, False

    def read(self, n):
        while not self.left:
            if self.done:
                return b''
            self.left = max(int(readline()), 0)
            self.done = not self.left
        if not buf:
            fill()
        part = bytes(buf[:min(n, self.left)])
        del buf[:len(part)]
        self.left -= len(part)
        return part

    def drain(self):
        while self.read(1 << 20):
            pass

def feed(w):
    """A put's input into w, all of it read even when the command stops reading, so the next
    request is read as one."""
    chunks, broken = Chunks(), w is None
    while True:
        part = chunks.read(1 << 20)
        if not part:
            break
        if not broken:
            try:
                write_all(w, part)
            except OSError:
                broken = True
    if w is not None:
        os.close(w)

def killed(cid):
    """Takes the kill requests at the front of what was read: whether one names command cid."""
    hit = False
    while buf.startswith(b'kill '):
        i = buf.find(NL)
        if i < 0:
            break
        hit = hit or bytes(buf[:i]) == b'kill ' + cid
        del buf[:i + 1]
    return hit

def wait_run(pid, cid):
    """The command's exit code, once it has ended; None when a kill could not end it."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return exit_code(status)
        if killed(cid):
            for _ in range(100):
                sweep()
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    return exit_code(status)
            return None
        ready = select.select([0, wake_r], [], [])[0]
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
        if 0 in ready:
            fill()

def as_sandbox_user(op, src):
    """A file operation done by the server itself with the sandbox user's rights (its effective ids:
    no capability, its groups cleared at start), root again after; never goes on as that user."""
    try:
        os.setegid(GID)
        os.seteuid(UID)
        return op(src)
    except Exception as e:
        write_all(2, ('redgreen-server: ' + str(e) + chr(10)).encode())
        return 127
    finally:
        try:
            os.seteuid(0)
            os.setegid(0)
        except BaseException:
            os._exit(70)

def settle():
    """ok once no process of the sandbox user is left (killing what lives), else dirty."""
    for _ in range(5000):
        what = left()
        if what is None:
            return 'ok'
        if what == 'live':
            sweep()
    return 'dirty'

def command(kind, cid, tok, spec):
    code, state = None, 'nostart'
    try:
        try:
            argv = words(spec)
        except ValueError:
            argv = None
        op = native(argv) if argv is not None else None
        if op is not None:
            # File work between commands (none of the sandbox user's processes is alive): no fork.
            state = 'dirty'
            chunks = Chunks() if kind == b'put' else None
            try:
                code = as_sandbox_user(op, chunks.read if chunks else lambda n: b'')
            finally:
                if chunks:
                    chunks.drain()
            state = settle()
            return
        stdin_r, stdin_w = os.pipe() if kind == b'put' else (os.open('/dev/null', os.O_RDONLY), None)
        pid = None
        if argv is not None:
            try:
                pid = os.fork()
            except OSError:
                pass
            if pid == 0:
                child(argv, stdin_r)
        os.close(stdin_r)
        if kind == b'put':
            if pid is None:
                os.close(stdin_w)
            feed(stdin_w if pid is not None else None)
        if pid is not None:
            state = 'dirty'
            code = exit_code(os.waitpid(pid, 0)[1]) if kind == b'put' else wait_run(pid, cid)
            if code is not None:
                state = settle()
    finally:
        oom = pmax = full = None
        if state == 'ok':
            oom = counter(MEMORY_FILES, 'oom_kill')
            pmax = counter(PIDS_FILES, 'max')
            if code != 0:
                full = full_mount()
        frame = [tok, cid, str(255 if code is None else code).encode(), state.encode()]
        frame += [(x or '-').encode() for x in (oom, pmax, full)]
        write_all(1, b' '.join(frame) + NL)
        write_all(2, tok + b' ' + cid + NL)

def link():
    """The server's ends of the FIFOs to the harness (link.ts), blocking again, when it offers them
    and has its ends open (else None: the attach stream serves). Opened without waiting: where
    the engine shows the folder but not the harness at the other end, there is no reader."""
    fds = []
    try:
        for name, flag in (('out', os.O_WRONLY), ('err', os.O_WRONLY), ('in', os.O_RDONLY)):
            fds.append(os.open(LINK + '/' + name, flag | os.O_NONBLOCK | os.O_CLOEXEC))
            if not stat.S_ISFIFO(os.fstat(fds[-1]).st_mode):
                raise OSError(0, 'not a FIFO')
    except OSError:
        for fd in fds:
            os.close(fd)
        return None
    for fd in fds:
        os.set_blocking(fd, True)
    return fds

# File work acts with the sandbox user's ids, without root's groups (as_sandbox_user).
os.setgroups([])

pipes = link()
# nolink: a link was offered (its folder is mounted) and its FIFOs have no harness at the other end.
said = b' link' if pipes else b' nolink' if os.path.isdir(LINK) else b''
write_all(1, b'redgreen-server ready ' + sys.argv[1].encode() + said + NL)
if pipes:
    # The harness speaks through the FIFOs from here on (the attach stream's input, with the line
    # Podman may start it with, is left unread): output, errors, requests.
    for fd, to in zip(pipes, (1, 2, 0)):
        os.dup2(fd, to)
        os.close(fd)
else:
    readline()
while True:
    req = readline()
    kind, _, rest = req.partition(b' ')
    cid, _, rest = rest.partition(b' ')
    if kind in (b'run', b'put'):
        tok, _, spec = rest.partition(b' ')
        command(kind, cid, tok, spec)
    elif kind != b'kill':
        os._exit(3)
`;
