def risky(x):
    if x % 3 == 0:
        raise ValueError("bad %d" % x)
    return x * 2


total = 0
for i in range(6):
    try:
        total += risky(i)
    except ValueError as e:
        print("caught", e)
    finally:
        total += 1
try:
    {}["missing"]
except KeyError as e:
    print("key", repr(e))
try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise RuntimeError("wrapped")
except RuntimeError as e:
    print("chained", type(e.__context__).__name__)
print(total)
