import sys
print("text", end="")
sys.stdout.buffer.write(b" raw bytes ")
print("more text")
sys.stderr.buffer.write(b"err bytes, no newline")
