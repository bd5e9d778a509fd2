class Noisy:
    def __del__(self):
        print("finalised at interpreter exit")
keep = Noisy()
print("body")
