import threading, time
ev = threading.Event()
def loop():
    ev.set()
    while True:
        time.sleep(0.01)
threading.Thread(target=loop, daemon=True).start()
ev.wait()
print("a daemon thread is still running")
