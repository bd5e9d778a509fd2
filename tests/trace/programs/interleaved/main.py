import sys
for i in range(5):
    print("out", i)
    print("err", i, file=sys.stderr)
    if i == 2:
        sys.stdout.flush()
sys.stdout.write("no newline at end")
sys.stderr.write("no newline either")
