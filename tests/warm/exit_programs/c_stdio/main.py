import ctypes
libc = ctypes.CDLL(None)
libc.printf(b"C stdio, flushed by the C library's exit\n")
print("Python's own stdout")
