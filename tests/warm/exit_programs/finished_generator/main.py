def gen():
    try:
        yield 1
        yield 2
    finally:
        print("finally ran while consumed")
g = gen()
print(list(g))
h = (i for i in range(3))
print(next(h), list(h))
