import sys
print("C long, then int, then 8 bits: 2**40 + 7 exits 7")
sys.exit(2 ** 40 + 7)
