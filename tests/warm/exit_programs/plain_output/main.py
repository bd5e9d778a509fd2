import sys
for i in range(3000):
    print(i, "x" * (i % 50))
sys.stdout.write("no newline at the end")
