import threading
out = []
def work(n):
    out.append(sum(range(n)))
t = threading.Thread(target=work, args=(10000,))
t.start()
print("started")
