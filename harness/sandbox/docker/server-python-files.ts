import { EXTRACT_ARGV, PATHS_SCRIPT } from './paths.js';
import { RESET_OTHERS, RESET_SCRIPT, RESET_VOLUMES } from './reset.js';

const bytes = (s: string) => `${JSON.stringify(s)}.encode()`;

/**
 * The Python server's file work (server-python.ts): the harness's internal file commands, done
 * without starting sh, tar, cat, rm or find, recognised by their exact words. The server does them
 * itself, with the sandbox user's effective uid and gid (so exactly that user's rights: no
 * capability, no group) and root's again after; it only ever handles a request once no process of
 * that user is left, so none can be there to signal, trace or race it. They are framed like a
 * command, and say what the scripts' programs would say, with their exit codes:
 * - EXTRACT_ARGV (paths.ts): the archives the harness packs (files, folders, symlinks, hard links;
 *   ustar, pax and GNU long names) extracted at / as GNU `tar -x -p` does as a user: a file or
 *   link replaces what is there, missing parents are made, modes are exact, a folder's mode and
 *   time are set once all it holds is in; a name with `..` is refused.
 * - PATHS_SCRIPT (paths.ts): the same letters on stderr and exit codes, then write, read or remove.
 * - RESET_SCRIPT (reset.ts): the same places emptied, the same second pass for read-only
 *   folders, the same "left: …" and IPC check. Like the script, a tree the sandbox user cannot
 *   empty (too deep for a path) is left, and the container goes.
 * In the runtime image an upload, a write or a read costs the container about 0.2 ms of CPU this
 * way, 2.5–3 ms in a forked child (any command's cost: a fork of the server), 5–7 ms through the sh
 * server's programs.
 */
export const PYTHON_FILE_OPS = String.raw`
EXTRACT_ARGV = [w.encode() for w in ${JSON.stringify(EXTRACT_ARGV)}]
PATHS_HEAD = [b'/bin/sh', b'-c', ${bytes(PATHS_SCRIPT)}, b'sh']
RESET = ${bytes(RESET_SCRIPT)}
VOLUMES = [p.encode() for p in ${JSON.stringify(RESET_VOLUMES)}]
PLACES = VOLUMES + [p.encode() for p in ${JSON.stringify(RESET_OTHERS)}]

def native(argv):
    """The file work these words ask for, as a function of its input (read(n): up to n bytes, b'' at
    the end): None for any other command."""
    if argv == EXTRACT_ARGV:
        return extract
    if len(argv) > 4 and argv[:4] == PATHS_HEAD:
        return lambda src: paths(argv[4], argv[5:], src)
    if argv == [b'/bin/sh', b'-c', RESET]:
        return lambda src: reset()
    return None

def say(tool, message):
    write_all(2, tool + b': ' + message + NL)

def why(e):
    return os.strerror(e.errno).encode() if e.errno else str(e).encode()

class Input:
    """The input, read in large blocks."""
    def __init__(self, src):
        self.src, self.data, self.at = src, b'', 0

    def read(self, n):
        if self.at == len(self.data):
            if n >= 65536:
                return self.src(min(n, 1 << 20))
            self.data, self.at = self.src(262144), 0
        out = self.data[self.at:self.at + n]
        self.at += len(out)
        return out

    def exact(self, n):
        parts = []
        while n > 0:
            part = self.read(n)
            if not part:
                raise EOFError
            parts.append(part)
            n -= len(part)
        return b''.join(parts)

def number(field):
    if field[:1] and field[0] & 0x80:
        return int.from_bytes(field[1:], 'big')
    s = field.split(b'\0', 1)[0].strip()
    return int(s, 8) if s else 0

def cstring(field):
    return field.split(b'\0', 1)[0]

def pax_records(data):
    out = {}
    while data:
        length, _, rest = data.partition(b' ')
        n = int(length)
        key, _, value = rest[:n - len(length) - 2].partition(b'=')
        out[key] = value
        data = data[n:]
    return out

class Failed(Exception):
    """What tar says it could not do (its words), and why."""

def replace(path):
    """Makes way for a new entry, as tar does: a file or link is unlinked, an empty folder removed."""
    if stat.S_ISDIR(os.lstat(path).st_mode):
        os.rmdir(path)
    else:
        os.unlink(path)

def create(path, make):
    try:
        return make()
    except FileExistsError:
        replace(path)
        return make()

def extract(read):
    src, folders, made, failed = Input(read), [], set(), False
    pax, long_name, long_link, seen = {}, None, None, False
    while True:
        try:
            header = src.exact(512)
        except EOFError:
            if seen:
                break
            say(b'tar', b'This does not look like a tar archive')
            failed = True
            break
        if not header.strip(b'\0'):
            break
        check = number(header[148:156])
        if check != sum(header[:148]) + 256 + sum(header[156:]):
            say(b'tar', b'This does not look like a tar archive' if not seen else b'Skipping to next header')
            failed = True
            break
        seen = True
        kind = header[156:157]
        size = int(pax.get(b'size', b'0')) if b'size' in pax else number(header[124:136])
        if kind in (b'x', b'g', b'L', b'K'):
            meta = src.exact(size + (-size % 512))[:size]
            if kind == b'x':
                pax = pax_records(meta)
            elif kind == b'L':
                long_name = cstring(meta)
            elif kind == b'K':
                long_link = cstring(meta)
            continue
        name = pax.get(b'path') or long_name
        if name is None:
            name = cstring(header[0:100])
            if header[257:262] == b'ustar' and header[345:500].strip(b'\0'):
                name = cstring(header[345:500]) + b'/' + name
        link = pax.get(b'linkpath') or long_link or cstring(header[157:257])
        mtime = float(pax[b'mtime']) if b'mtime' in pax else number(header[136:148])
        mode = number(header[100:108]) & 0o7777
        pax, long_name, long_link = {}, None, None
        rel = name.lstrip(b'/').rstrip(b'/')
        path = b'/' + rel
        data = 0 if kind in b'123456' else size  # links, devices, folders and fifos have no body
        unread = data
        try:
            if b'..' in rel.split(b'/'):
                raise ValueError('Member name contains ' + chr(39) + '..' + chr(39))
            parent = os.path.dirname(path)
            if parent not in made:
                os.makedirs(parent, exist_ok=True)
                made.add(parent)
            if kind in (b'0', b'\0', b'7'):
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
                fd = create(path, lambda: os.open(path, flags, 0o600))
                try:
                    while unread > 0:
                        part = src.read(min(unread, 1 << 20))
                        if not part:
                            raise EOFError
                        unread -= len(part)
                        try:
                            write_all(fd, part)
                        except OSError as e:
                            raise Failed('Cannot write', e)
                finally:
                    # As tar: the mode and time even of a file cut short.
                    try:
                        os.fchmod(fd, mode)
                        os.utime(fd, (mtime, mtime))
                    finally:
                        os.close(fd)
            elif kind == b'5':
                try:
                    os.mkdir(path, 0o700)
                except FileExistsError:
                    if not stat.S_ISDIR(os.lstat(path).st_mode):
                        create(path, lambda: os.mkdir(path, 0o700))
                folders.append((path, mode, mtime))
                made.add(path)
            elif kind == b'2':
                create(path, lambda: os.symlink(link, path))
                os.utime(path, (mtime, mtime), follow_symlinks=False)
            elif kind == b'1':
                target = b'/' + link.lstrip(b'/')
                create(path, lambda: os.link(target, path, follow_symlinks=False))
            else:
                raise ValueError('Unknown file type; not extracted')
        except EOFError:
            say(b'tar', b'Unexpected EOF in archive')
            failed = True
            break
        except Failed as e:
            say(b'tar', rel + b': ' + e.args[0].encode() + b': ' + why(e.args[1]))
            failed = True
        except OSError as e:
            say(b'tar', rel + b': Cannot open: ' + why(e))
            failed = True
        except ValueError as e:
            say(b'tar', rel + b': ' + str(e).encode())
            failed = True
        try:
            src.exact(unread + (-data % 512))
        except EOFError:
            say(b'tar', b'Unexpected EOF in archive')
            failed = True
            break
    for path, mode, mtime in reversed(folders):
        try:
            os.chmod(path, mode)
            os.utime(path, (mtime, mtime))
        except OSError as e:
            say(b'tar', path[1:] + b': Cannot change mode: ' + why(e))
            failed = True
    if failed:
        say(b'tar', b'Exiting with failure status due to previous errors')
        return 2
    return 0

def kind_of(a):
    try:
        m = os.lstat(a).st_mode
    except OSError:
        return b'N' if os.access(a.rsplit(b'/', 1)[0], os.X_OK, effective_ids=True) else b'U'
    return b'L' if stat.S_ISLNK(m) else b'D' if stat.S_ISDIR(m) else b'F'

def paths(action, args, src):
    """PATHS_SCRIPT: each path's components checked (one letter each), then the action."""
    letters, bad, targets, i = [], False, [], 0
    while i < len(args):
        n = int(args[i])
        parts = args[i + 1:i + 1 + n]
        i += 1 + n
        targets.append(parts[-1])
        missing = False
        for j, a in enumerate(parts, 1):
            k = kind_of(a)
            letters.append(k + NL)
            if missing:
                continue
            if k == b'N':
                missing = True
            elif k in (b'L', b'U') or (k == b'F' and j < n) or (k == b'D' and j == n and action == b'write'):
                bad = True
    write_all(2, b''.join(letters))
    if bad:
        return 3
    if action == b'write':
        return extract(src)
    if action == b'read':
        return read_file(targets[-1])
    if action == b'remove':
        for a in targets:
            if not remove_tree(a):
                return 1
    return 0

def read_file(a):
    try:
        st = os.lstat(a)
    except OSError:
        return 4
    if not stat.S_ISREG(st.st_mode):
        return 4
    try:
        # Non-blocking until it is known to be a regular file: one swapped for a fifo would never open.
        fd = os.open(a, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as e:
        say(b'cat', a + b': ' + why(e))
        return 1
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return 4
        os.set_blocking(fd, True)
        while True:
            part = os.read(fd, 1 << 20)
            if not part:
                return 0
            write_all(1, part)
    except OSError as e:
        say(b'cat', a + b': ' + why(e))
        return 1
    finally:
        os.close(fd)

def is_dir(entry):
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False

def below(top, on_folder=None):
    """Deletes what is below top (not top), deepest first, as find -depth -delete: what cannot go
    stays (returns the first error). on_folder is called on each folder before it is listed."""
    folders, todo, first = [], [top], None
    while todo:
        d = todo.pop()
        if on_folder:
            on_folder(d)
        try:
            entries = list(os.scandir(d))
        except OSError as e:
            first = first or (d, e)
            continue
        for e in entries:
            if is_dir(e):
                todo.append(e.path)
                folders.append(e.path)
            else:
                try:
                    os.unlink(e.path)
                except OSError as err:
                    first = first or (e.path, err)
    for d in reversed(folders):
        try:
            os.rmdir(d)
        except OSError as e:
            first = first or (d, e)
    return first

def remove_tree(a):
    """rm -rf -- a: True when it is gone (or was never there)."""
    try:
        m = os.lstat(a).st_mode
    except FileNotFoundError:
        return True
    except OSError as e:
        say(b'rm', b'cannot remove ' + a + b': ' + why(e))
        return False
    try:
        if stat.S_ISDIR(m):
            err = below(a)
            if err:
                raise err[1]
            os.rmdir(a)
        else:
            os.unlink(a)
    except OSError as e:
        say(b'rm', b'cannot remove ' + a + b': ' + why(e))
        return False
    return True

def writable(d):
    try:
        m = os.lstat(d).st_mode
        if stat.S_ISDIR(m) and m & 0o700 != 0o700:
            os.chmod(d, stat.S_IMODE(m) | 0o700)
    except OSError:
        pass

def clear(second):
    for place in PLACES:
        below(place, writable if second else None)
        if place in VOLUMES:
            try:
                if stat.S_IMODE(os.lstat(place).st_mode) != 0o755:
                    os.chmod(place, 0o755)
            except OSError:
                pass

def leftover():
    """A path still in one of the places (a place the user cannot list counts as empty, as the script's glob)."""
    for place in PLACES:
        try:
            for e in os.scandir(place):
                return e.path
        except OSError:
            pass
    return None

def ipc():
    for f in ('/proc/sysvipc/shm', '/proc/sysvipc/sem', '/proc/sysvipc/msg'):
        try:
            if len(slurp(f).splitlines()) > 1:
                return ('an IPC object (' + f + ')').encode()
        except OSError:
            pass
    return None

def quietly(argv):
    pid = os.fork()
    if pid == 0:
        try:
            # A child of the server acting as the sandbox user: that user for good before ipcrm starts.
            os.seteuid(0)
            become_user()
            null = os.open('/dev/null', os.O_RDWR)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.waitpid(pid, 0)

def reset():
    clear(False)
    if leftover():
        clear(True)
    what = leftover()
    if what is None:
        if ipc():
            quietly(['ipcrm', '-a'])
        what = ipc()
    if what is None:
        return 0
    write_all(2, b'left: ' + what + NL)
    return 1
`;
