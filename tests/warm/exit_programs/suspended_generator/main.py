def gen():
    try:
        yield 1
        yield 2
    finally:
        print("finally at exit")
g = gen()
print(next(g))
