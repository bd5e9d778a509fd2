class Noisy:
    def __init__(self, n):
        self.n = n
    def __del__(self):
        print("del", self.n)
def scope():
    a = Noisy(1)
    b = Noisy(2)
    return b.n
print(scope())
x = Noisy(3)
x = None
print("after")
