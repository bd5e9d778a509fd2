import sys
print("beyond a C long: Python's main decides")
sys.exit(2 ** 70)
