import sys
def hook(event, args):
    if event.startswith(("cpython.", "gc.")):
        print("audit:", event)
sys.addaudithook(hook)
print("body")
