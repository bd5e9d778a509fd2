"""A job that reads its own address space for other jobs' markers
(tests/warm/test_heap_scan.py; issue 35 finding 5).

  python3 memscan.py    (needles.txt in its directory: a line per marker,
                         LABEL HEAD TAIL_LENGTH SHA256_OF_TAIL_HEX)

A marker is HEAD + TAIL, and only HEAD and the tail's digest are given: a
hit is HEAD followed by bytes of that digest in a copy of the memory read,
so nothing of this program is ever a hit, and its own objects are of other
sizes than a marker's (Python's allocator would put them in the very free
blocks that held the other job's strings, overwriting them before the scan:
an attacker would keep out of them too). Chunks are read into one mapping
of our own, never a heap allocation. Every readable mapping is read through /proc/self/mem (a
dumpable process, as a cold one is), else, where that is refused (a warm
child before issue 35 was not dumpable), anonymous mappings through ctypes.
Prints `found LABEL` per marker seen, then `scanned N bytes via WAY`."""
import hashlib
import mmap
import sys

with open("needles.txt") as f:
    needles = [(w[0], w[1].encode(), int(w[2]), bytes.fromhex(w[3])) for w in (line.split() for line in f) if len(w) == 4]
found = set()
# into one mapping of our own, never a heap allocation per chunk: that
# would reuse (and overwrite) the very free memory this looks into
STEP = 1 << 20
buf = mmap.mmap(-1, STEP + 256, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)


def scan(n):
    for label, head, tail_len, tail_sha in needles:
        if label in found:
            continue
        i = buf.find(head, 0, n)
        while i >= 0:
            j = i + len(head)
            if j + tail_len <= n and hashlib.sha256(buf[j:j + tail_len]).digest() == tail_sha:
                found.add(label)
                break
            i = buf.find(head, i + 1, n)


regions = []
with open("/proc/self/maps") as f:
    for line in f:
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        path = parts[5] if len(parts) > 5 else ""
        if parts[1][0] == "r" and path not in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
            regions.append((lo, hi, path))
total, way = 0, "/proc/self/mem"
try:
    mem = open("/proc/self/mem", "rb", buffering=0)
    mem.seek(regions[0][0])
    mem.read(1)
except OSError:
    mem, way = None, "ctypes (anonymous mappings)"
    import ctypes
    at_buf = ctypes.addressof(ctypes.c_char.from_buffer(buf))
view = memoryview(buf)
for lo, hi, path in regions:
    if mem is None and path not in ("", "[heap]", "[stack]"):
        continue  # a file's mapping past its end would raise SIGBUS through ctypes
    at = lo
    while at < hi:
        n = min(STEP + 256, hi - at)  # chunks overlap: a marker across a boundary is seen
        try:
            if mem is not None:
                mem.seek(at)
                got = mem.readinto(view[:n])
            else:
                ctypes.memmove(at_buf, at, n)
                got = n
        except OSError:
            got = 0
        total += got
        scan(got)
        at += STEP
for label in sorted(found):
    print("found", label)
print("scanned %d bytes via %s" % (total, way))
