import sys
name = input("name? ")
n = int(input())
rest = sys.stdin.read()
print("hello", name, n * 2, repr(rest))
