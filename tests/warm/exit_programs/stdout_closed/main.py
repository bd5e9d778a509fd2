import sys
print("before close", end="")
sys.stdout.close()
sys.stderr.write("stdout closed\n")
