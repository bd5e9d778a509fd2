def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))
print(fib(12), ackermann(2, 3))
