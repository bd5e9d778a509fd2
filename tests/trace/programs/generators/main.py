def count(n):
    i = 0
    while i < n:
        got = yield i
        if got:
            i += got
        i += 1
    return "done"
def chain(a, b):
    r = yield from count(a)
    print("inner returned", r)
    yield from b
g = count(10)
print(next(g), g.send(3), next(g))
g.close()
print(list(chain(3, "xy")))
print(sum(x * x for x in range(5)))
def closer():
    try:
        yield 1
    finally:
        print("closed")
c = closer()
next(c)
del c
print("end")
