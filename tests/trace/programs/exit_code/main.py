import sys
print("leaving with 3")
sys.exit(3)
