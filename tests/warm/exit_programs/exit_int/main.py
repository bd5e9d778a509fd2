import sys
print("partial", end="")
sys.exit(3)
