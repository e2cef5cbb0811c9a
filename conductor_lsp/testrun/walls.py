"""Walls around a confined test run, where Linux allows them without privileges: a user
namespace with a network namespace (no network; loopback only, up, so a test may still
serve itself), a mount namespace in which everything is read-only except the run's
sandbox and private HOME (and ``/dev``; ``/dev/shm`` is a fresh one), and a process
table of its own (a PID namespace with its own ``/proc``: the tests neither see nor
signal the user's other processes, and whatever they started ends with the run).

This file is also the program that builds them: ``wrap`` prefixes a command with
``python -I -S walls.py WRITABLE... -- COMMAND``, which enters the namespaces, mounts,
and starts the command under a small first process of the new table; it stays the
run's process (its group, its mark, its timeout) and exits as the command did. It
imports only the standard library for that reason.
Without user namespaces (another system, a kernel or container that forbids them)
``probe`` says why and the run has the environment's confinement only.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import os
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
CLONE_NEWPID, PR_SET_PDEATHSIG = 0x20000000, 1
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 0x20, 0x400, 0x800, 0x1000
MS_REC, MS_PRIVATE, MS_RELATIME = 0x4000, 0x40000, 0x200000
#: Mount options a remount must keep (the kernel refuses to drop a locked one).
KEPT = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
}
#: Left as they are: devices, the process table (mounted anew), the kernel's own files.
UNTOUCHED = ("/dev", "/proc", "/sys")
#: The exit status when the walls could not be built (the command never ran).
FAILED = 125
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


@dataclass(frozen=True)
class Walls:
    """Whether this machine can wall a test run in, and if not, why."""

    in_force: bool
    why: str = ""
    #: Whether the run has a ``/proc`` of its own (where the machine allows mounting one).
    own_processes: bool = False

    def describe(self) -> str:
        if self.in_force:
            table = (
                "a process table of their own"
                if self.own_processes
                else "the process table still readable (no /proc of their own here)"
            )
            return (
                "no network (loopback only), a read-only view outside their sandbox and "
                f"{table} (Linux user namespaces)"
            )
        return f"the network and the files outside their sandbox are not walled off ({self.why})"


def wrap(argv: Sequence[str], writable: Sequence[Path]) -> list[str]:
    """``argv`` run inside the walls, with ``writable`` the only places it may write."""
    places = [str(Path(p).resolve()) for p in writable]
    return [sys.executable, "-I", "-S", __file__, *places, "--", *argv]


@functools.cache
def probe() -> Walls:
    """Build the walls once around ``true``, in a throwaway folder (cached per process)."""
    if not sys.platform.startswith("linux"):
        return Walls(False, f"{sys.platform} has no user namespaces")
    count = "import os; print(sum(p.isdigit() for p in os.listdir('/proc')))"
    with tempfile.TemporaryDirectory(prefix="conductor-walls-") as box:
        try:
            done = subprocess.run(
                wrap([sys.executable, "-I", "-S", "-c", count], [Path(box)]),
                cwd=box,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as e:
            return Walls(False, f"cannot start the walls: {e}")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        return Walls(False, last.removeprefix("conductor-lsp walls: "))
    seen = done.stdout.strip()
    return Walls(True, own_processes=seen.isdigit() and int(seen) <= 3)


# What follows runs inside, before the command.


class WallError(Exception):
    pass


_libc = ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise WallError(f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _mount(source: str, target: str, kind: str | None, flags: int, what: str) -> None:
    data = kind.encode() if kind else None
    _call(_libc.mount(source.encode(), target.encode(), data, flags, None), what)


def _own_user(outside_uid: int, outside_gid: int, inside_uid: int, inside_gid: int) -> None:
    _call(_libc.unshare(CLONE_NEWUSER), "user namespace")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{inside_uid} {outside_uid} 1")
    _write("/proc/self/gid_map", f"{inside_gid} {outside_gid} 1")


def _loopback_up() -> None:
    with socket.socket() as s:
        ifr = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, ifr))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _mount_points() -> list[tuple[str, int]]:
    """Each mount point and the options a remount must keep, from mountinfo."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            point = parts[4].encode().decode("unicode_escape")  # \040 for a space
            keep = 0
            for option in parts[5].split(","):
                keep |= KEPT.get(option, 0)
            out.append((point, keep))
    return out


def _read_only_but(writable: Sequence[str]) -> None:
    _mount("none", "/", None, MS_REC | MS_PRIVATE, "private mounts")
    for place in writable:
        _mount(place, place, None, MS_BIND | MS_REC, f"bind {place}")
    for point, keep in _mount_points():
        if _under(point, writable) or _under(point, UNTOUCHED):
            continue
        _mount("none", point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, f"read-only {point}")
    try:  # a /dev/shm of its own (the machine's is shared by everyone)
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "/dev/shm")
    except WallError:
        pass


def enter(writable: Sequence[str]) -> tuple[int, int]:
    """Into the walls: this process's network and mounts are its own from here on, and
    its next child is the first process of a table of its own. Returns who the user is."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID
    _call(_libc.unshare(flags), "namespaces")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"0 {uid} 1")
    _write("/proc/self/gid_map", f"0 {gid} 1")
    _loopback_up()
    _read_only_but(writable)
    os.chdir(os.getcwd())  # the working folder as the new mounts show it
    return uid, gid


def first_process(command: Sequence[str], uid: int, gid: int) -> int:
    """Process 1 of the run's table: its own ``/proc``, the user again (not root of the
    namespace), then the command, reaping what it leaves; when this ends, the kernel ends
    everything else in the table. Dies with the process that started it."""
    _libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "/proc")
    except WallError:  # a container may forbid it: the machine's table stays readable
        pass
    if uid != 0:
        _own_user(0, 0, uid, gid)
    child = os.fork()
    if child == 0:
        _exec(command)
    while True:
        pid, status = os.wait()
        if pid == child:
            return _code(status)


def _exec(command: Sequence[str]) -> None:
    try:
        os.execvp(command[0], list(command))
    except OSError as e:
        print(f"conductor-lsp walls: cannot start {command[0]}: {e}", file=sys.stderr)
    os._exit(127)


def _code(status: int) -> int:
    """An exit status as a shell reports it (128 + the signal that ended it)."""
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def main(args: Sequence[str]) -> int:
    if "--" not in args:
        print("conductor-lsp walls: usage: walls.py WRITABLE... -- COMMAND", file=sys.stderr)
        return FAILED
    cut = list(args).index("--")
    writable, command = list(args[:cut]), list(args[cut + 1 :])
    try:
        uid, gid = enter(writable)
    except (WallError, OSError) as e:
        print(f"conductor-lsp walls: {e}", file=sys.stderr)
        return FAILED
    first = os.fork()
    if first == 0:
        try:
            os._exit(first_process(command, uid, gid))
        except (WallError, OSError) as e:
            print(f"conductor-lsp walls: {e}", file=sys.stderr)
            os._exit(FAILED)
    return _code(os.waitpid(first, 0)[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
